// x86_bit_masks.cpp: see x86_bit_masks.hpp.
#include "runtime/codegen/x86_bit_masks.hpp"

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Local.h>

#include <vector>

namespace tg::codegen {
namespace {

// Whether lane i of c is 1 << (i mod w) for every lane.
bool tests_lane_bits(llvm::Constant* c, unsigned lanes, unsigned w) {
  for (unsigned i = 0; i < lanes; ++i) {
    auto* e = llvm::dyn_cast_or_null<llvm::ConstantInt>(c->getAggregateElement(i));
    if (e == nullptr || e->getValue() != llvm::APInt::getOneBitSet(w, i % w)) return false;
  }
  return true;
}

bool is_zero(llvm::Value* v) {
  auto* c = llvm::dyn_cast<llvm::Constant>(v);
  return c != nullptr && c->isNullValue();
}

// The mask as an integer of N bits for a compare of the documented form; null otherwise.
llvm::Value* mask_word(llvm::ICmpInst* cmp) {
  auto* type = llvm::dyn_cast<llvm::FixedVectorType>(cmp->getOperand(0)->getType());
  if (!cmp->isEquality() || type == nullptr || !type->getElementType()->isIntegerTy()) return nullptr;
  const unsigned lanes = type->getNumElements(), w = type->getScalarSizeInBits();
  if (lanes != 8 && lanes != 16 && lanes != 32 && lanes != 64) return nullptr;
  llvm::Value* tested = is_zero(cmp->getOperand(1)) ? cmp->getOperand(0)
                        : is_zero(cmp->getOperand(0)) ? cmp->getOperand(1) : nullptr;
  auto* bit_and = llvm::dyn_cast_or_null<llvm::BinaryOperator>(tested);
  if (bit_and == nullptr || bit_and->getOpcode() != llvm::Instruction::And) return nullptr;
  llvm::Value* v = bit_and->getOperand(0);
  auto* bits = llvm::dyn_cast<llvm::Constant>(bit_and->getOperand(1));
  if (bits == nullptr) {
    v = bit_and->getOperand(1);
    bits = llvm::dyn_cast<llvm::Constant>(bit_and->getOperand(0));
  }
  if (bits == nullptr || !tests_lane_bits(bits, lanes, w)) return nullptr;
  std::vector<llvm::Value*> words;  // s_k: the scalar behind lanes k w .. k w + w - 1
  for (unsigned i = 0; i < lanes; ++i) {
    llvm::Value* s = llvm::findScalarElement(v, i);
    if (s == nullptr) return nullptr;
    if (i % w == 0) words.push_back(s);
    else if (s != words.back()) return nullptr;
  }
  llvm::IRBuilder<> b(cmp);
  llvm::Type* word = b.getIntNTy(lanes);
  llvm::Value* mask = nullptr;
  for (std::size_t k = 0; k < words.size(); ++k) {
    llvm::Value* part = b.CreateZExtOrTrunc(words[k], word);
    if (k > 0) part = b.CreateShl(part, std::uint64_t(k * w));
    mask = mask == nullptr ? part : b.CreateOr(mask, part);
  }
  return mask;
}

}  // namespace

int rewrite_bit_test_masks(llvm::Module& module) {
  int rewritten = 0;
  for (llvm::Function& f : module) {
    std::vector<llvm::ICmpInst*> compares;
    for (llvm::Instruction& inst : llvm::instructions(f))
      if (auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(&inst); cmp != nullptr && cmp->getType()->isVectorTy())
        compares.push_back(cmp);
    for (llvm::ICmpInst* cmp : compares) {
      llvm::Value* mask = mask_word(cmp);
      if (mask == nullptr) continue;
      llvm::IRBuilder<> b(cmp);
      llvm::Value* lanes = b.CreateBitCast(mask, cmp->getType());
      if (cmp->getPredicate() == llvm::ICmpInst::ICMP_EQ) {
        // A select on the bit being clear takes its arms the other way round; other users the
        // complement (a knot the select would otherwise pay for).
        for (llvm::User* user : llvm::SmallVector<llvm::User*>(cmp->users()))
          if (auto* select = llvm::dyn_cast<llvm::SelectInst>(user); select != nullptr && select->getCondition() == cmp) {
            select->setCondition(lanes);
            select->swapValues();
          }
        if (!cmp->use_empty()) cmp->replaceAllUsesWith(b.CreateBitCast(b.CreateNot(mask), cmp->getType()));
      } else {
        cmp->replaceAllUsesWith(lanes);
      }
      llvm::RecursivelyDeleteTriviallyDeadInstructions(cmp);
      ++rewritten;
    }
  }
  return rewritten;
}

}  // namespace tg::codegen
