// byte_words.cpp: see byte_words.hpp.
#include "runtime/codegen/byte_words.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <vector>

namespace tg::codegen {
namespace {

bool is_byte_quad(llvm::Type* t) {
  auto* v = llvm::dyn_cast<llvm::FixedVectorType>(t);
  return v != nullptr && v->getNumElements() == 4 && v->getElementType()->isIntegerTy(8);
}

// The shift amount of a splat constant in [1, 7], else -1.
int splat_shift(llvm::Value* v) {
  auto* c = llvm::dyn_cast<llvm::Constant>(v);
  if (c == nullptr) return -1;
  auto* s = llvm::dyn_cast_or_null<llvm::ConstantInt>(c->getSplatValue());
  if (s == nullptr || s->getZExtValue() < 1 || s->getZExtValue() > 7) return -1;
  return int(s->getZExtValue());
}

std::uint32_t each_byte(std::uint32_t b) { return (b & 0xFF) * 0x01010101u; }

// The word op of `i` (a <4 x i8> instruction, or a trunc to one), built before it; null when it
// is none of the forms rewritten.
llvm::Value* as_word(llvm::Instruction& i, byte_word_target target) {
  if (!is_byte_quad(i.getType())) return nullptr;
  llvm::IRBuilder<> b(&i);
  llvm::Type* word = b.getInt32Ty();
  auto w = [&](llvm::Value* v) { return b.CreateBitCast(v, word); };
  auto k = [&](std::uint32_t v) { return b.getInt32(v); };
  llvm::Value* out = nullptr;
  switch (i.getOpcode()) {
    case llvm::Instruction::LShr: case llvm::Instruction::Shl: {
      const int c = splat_shift(i.getOperand(1));
      if (c < 0) return nullptr;
      const bool right = i.getOpcode() == llvm::Instruction::LShr;
      llvm::Value* shifted = right ? b.CreateLShr(w(i.getOperand(0)), k(std::uint32_t(c))) : b.CreateShl(w(i.getOperand(0)), k(std::uint32_t(c)));
      out = b.CreateAnd(shifted, k(each_byte(right ? 0xFFu >> c : 0xFFu << c)));
      break;
    }
    case llvm::Instruction::Add: case llvm::Instruction::Sub: {
      // Per byte: the low 7 bits' sum or difference carries at most into the byte's top bit,
      // which the xor then sets from both operands' top bits (a borrow likewise, the minuend's
      // top bits set first so nothing borrows across a byte).
      llvm::Value *x = w(i.getOperand(0)), *y = w(i.getOperand(1));
      if (i.getOpcode() == llvm::Instruction::Add) {
        llvm::Value* low = b.CreateAdd(b.CreateAnd(x, k(0x7F7F7F7Fu)), b.CreateAnd(y, k(0x7F7F7F7Fu)));
        out = b.CreateXor(low, b.CreateAnd(b.CreateXor(x, y), k(0x80808080u)));
      } else {
        llvm::Value* low = b.CreateSub(b.CreateOr(x, k(0x80808080u)), b.CreateAnd(y, k(0x7F7F7F7Fu)));
        out = b.CreateXor(low, b.CreateAnd(b.CreateXor(x, b.CreateNot(y)), k(0x80808080u)));
      }
      break;
    }
    case llvm::Instruction::Trunc: {
      if (target != byte_word_target::nvptx) return nullptr;
      llvm::Value* src = i.getOperand(0);
      auto* from = llvm::dyn_cast<llvm::FixedVectorType>(src->getType());
      if (from == nullptr || !from->getElementType()->isIntegerTy(16)) return nullptr;
      llvm::Value* pair = b.CreateBitCast(src, llvm::FixedVectorType::get(word, 2));
      out = b.CreateIntrinsic(llvm::Intrinsic::nvvm_prmt, {},
                              {b.CreateExtractElement(pair, std::uint64_t(0)), b.CreateExtractElement(pair, std::uint64_t(1)), k(0x6420)});
      break;
    }
    default:
      return nullptr;
  }
  return b.CreateBitCast(out, i.getType());
}

}  // namespace

int rewrite_byte_vectors(llvm::Module& module, byte_word_target target) {
  int rewritten = 0;
  for (llvm::Function& f : module) {
    std::vector<llvm::Instruction*> dead;
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb)
        if (llvm::Value* replacement = as_word(i, target)) {
          i.replaceAllUsesWith(replacement);
          dead.push_back(&i);
        }
    for (llvm::Instruction* i : dead) i->eraseFromParent();
    rewritten += int(dead.size());
  }
  return rewritten;
}

}  // namespace tg::codegen
