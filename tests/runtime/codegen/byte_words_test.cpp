// byte_words_test.cpp: four-byte vectors as 32-bit words on the GPU targets (byte_words.hpp).
// The word forms of a byte-wise shift, add and subtract run on the host JIT against byte-by-byte
// arithmetic on random and edge operands; the narrowing of four i16 lanes becomes a prmt whose
// selector is checked against PTX's byte selection rule. (The quads' PTX, one dp4a each and no
// byte-by-byte unpacking, is checked in nvptx_test.cpp.)
#include <doctest/doctest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "drivers/cpu/orc_jit.hpp"
#include "runtime/codegen/byte_words.hpp"

namespace {

using word_fn = std::uint32_t (*)(std::uint32_t, std::uint32_t);

// i32 f(i32 a, i32 b) = op(a as <4 x i8>, b as <4 x i8>) as i32, after rewrite_byte_vectors; the
// count of instructions it rewrote in `rewritten`.
word_fn jit_byte_op(llvm::Instruction::BinaryOps op, bool splat_shift, int& rewritten) {
  static tg::cpu::orc_jit jit;
  static int counter = 0;
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("bytes", *context);
  jit.prepare(*module);
  const std::string name = "byte_op" + std::to_string(counter++);
  llvm::IRBuilder<> b(*context);
  auto* type = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt32Ty(), b.getInt32Ty()}, false);
  auto* f = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, *module);
  b.SetInsertPoint(llvm::BasicBlock::Create(*context, "entry", f));
  auto* quad = llvm::FixedVectorType::get(b.getInt8Ty(), 4);
  llvm::Value* x = b.CreateBitCast(f->getArg(0), quad);
  llvm::Value* y = splat_shift ? llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(4), b.getInt8(3))
                               : b.CreateBitCast(f->getArg(1), quad);
  b.CreateRet(b.CreateBitCast(b.CreateBinOp(op, x, y), b.getInt32Ty()));
  rewritten = tg::codegen::rewrite_byte_vectors(*module, tg::codegen::byte_word_target::amdgpu);
  return reinterpret_cast<word_fn>(jit.compile(std::move(context), std::move(module), name, false));
}

std::uint32_t bytewise(std::uint32_t a, std::uint32_t b, std::uint8_t (*op)(std::uint8_t, std::uint8_t)) {
  std::uint32_t out = 0;
  for (int i = 0; i < 4; ++i) out |= std::uint32_t(op(std::uint8_t(a >> 8 * i), std::uint8_t(b >> 8 * i))) << 8 * i;
  return out;
}

}  // namespace

TEST_CASE("byte-wise shifts, adds and subtracts as word ops compute what the byte lanes did") {
  struct form {
    const char* name;
    llvm::Instruction::BinaryOps op;
    bool shift;
    std::uint8_t (*reference)(std::uint8_t, std::uint8_t);
  };
  const form forms[] = {
      {"lshr 3", llvm::Instruction::LShr, true, [](std::uint8_t a, std::uint8_t) { return std::uint8_t(a >> 3); }},
      {"shl 3", llvm::Instruction::Shl, true, [](std::uint8_t a, std::uint8_t) { return std::uint8_t(a << 3); }},
      {"add", llvm::Instruction::Add, false, [](std::uint8_t a, std::uint8_t b) { return std::uint8_t(a + b); }},
      {"sub", llvm::Instruction::Sub, false, [](std::uint8_t a, std::uint8_t b) { return std::uint8_t(a - b); }},
  };
  std::vector<std::uint32_t> operands = {0, 0xFFFFFFFFu, 0x7F7F7F7Fu, 0x80808080u, 0x01FF7F80u, 0xE0E0E0E0u, 0x0F0F0F0Fu};
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) operands.push_back(rng());
  for (const form& f : forms) {
    CAPTURE(f.name);
    int rewritten = 0;
    const word_fn fn = jit_byte_op(f.op, f.shift, rewritten);
    CHECK(rewritten == 1);
    int wrong = 0;
    for (std::uint32_t a : operands)
      for (std::size_t j = 0; j < 40; ++j) {
        const std::uint32_t b = operands[(a + j * 7919) % operands.size()];
        wrong += fn(a, b) != bytewise(a, b, f.reference);
      }
    CHECK(wrong == 0);
  }
}

TEST_CASE("four i16 lanes narrowed to bytes become one prmt selecting bytes 0, 2, 4 and 6") {
  llvm::LLVMContext context;
  llvm::Module module("narrow", context);
  llvm::IRBuilder<> b(context);
  auto* wide = llvm::FixedVectorType::get(b.getInt16Ty(), 4);
  auto* type = llvm::FunctionType::get(b.getInt32Ty(), {wide}, false);
  auto* f = llvm::Function::Create(type, llvm::Function::ExternalLinkage, "narrow", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", f));
  b.CreateRet(b.CreateBitCast(b.CreateTrunc(f->getArg(0), llvm::FixedVectorType::get(b.getInt8Ty(), 4)), b.getInt32Ty()));
  CHECK(tg::codegen::rewrite_byte_vectors(module, tg::codegen::byte_word_target::amdgpu) == 0);  // NVPTX only
  CHECK(tg::codegen::rewrite_byte_vectors(module, tg::codegen::byte_word_target::nvptx) == 1);
  llvm::CallInst* prmt = nullptr;
  for (llvm::Instruction& i : f->getEntryBlock())
    if (auto* call = llvm::dyn_cast<llvm::CallInst>(&i); call && call->getIntrinsicID() == llvm::Intrinsic::nvvm_prmt) prmt = call;
  REQUIRE(prmt != nullptr);
  auto* selector = llvm::dyn_cast<llvm::ConstantInt>(prmt->getArgOperand(2));
  REQUIRE(selector != nullptr);
  // PTX ISA, "prmt" (default mode): result byte i is byte (selector >> 4 i) & 7 of {b, a} as eight
  // bytes, a's first (bit 3 would replicate a sign). The i16 lanes, little-endian in the two words.
  std::mt19937 rng(9);
  for (int t = 0; t < 200; ++t) {
    const std::uint16_t lane[4] = {std::uint16_t(rng()), std::uint16_t(rng()), std::uint16_t(rng()), std::uint16_t(rng())};
    const std::uint64_t bytes = std::uint64_t(lane[0]) | std::uint64_t(lane[1]) << 16 | std::uint64_t(lane[2]) << 32 |
                                std::uint64_t(lane[3]) << 48;
    std::uint32_t got = 0, want = 0;
    for (int i = 0; i < 4; ++i) {
      const unsigned nibble = unsigned(selector->getZExtValue() >> 4 * i) & 0xF;
      CHECK(nibble < 8);
      got |= std::uint32_t((bytes >> 8 * nibble) & 0xFF) << 8 * i;
      want |= std::uint32_t(lane[i] & 0xFF) << 8 * i;
    }
    CHECK(got == want);
  }
}
