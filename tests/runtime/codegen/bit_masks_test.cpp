// bit_masks_test.cpp: lanes testing successive bits of one scalar become that scalar as a mask
// (x86_bit_masks.hpp). Each form the rewrite takes (two 16-bit halves as Q5_0's decode builds
// them, eight bytes, a splat narrower than its word, bit-clear tests feeding a select) runs on the
// host JIT against the bits tested one by one; forms it must leave alone are left alone; and for
// Zen 4 the Q5 shape compiles to a kmovd with no vptest.
#include <doctest/doctest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "drivers/cpu/orc_jit.hpp"
#include "runtime/codegen/x86_bit_masks.hpp"

namespace {

// A function void f(const uint8_t* words, uint8_t* out) whose N lanes test bit (i mod W) of
// word i / W (W-bit words read from `words`, each broadcast over its W lanes by an insertelement
// chain, or one word splat when `splat`) and store 16 where the bit is set, else 0 (with `clear`
// as LLVM leaves it: the bit-clear compare, eq, selecting 0 or 16). `bits` overrides the tested
// constant for lane i.
struct bit_test_form {
  unsigned lanes, width;
  bool splat = false, clear = false;
  std::vector<std::uint64_t> bits = {};
};

std::unique_ptr<llvm::Module> build(llvm::LLVMContext& context, const bit_test_form& form, const std::string& name) {
  auto module = std::make_unique<llvm::Module>("masks", context);
  llvm::IRBuilder<> b(context);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getPtrTy()}, false),
                                   llvm::Function::ExternalLinkage, name, *module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", f));
  llvm::Type* word = b.getIntNTy(form.width);
  auto* vec = llvm::FixedVectorType::get(word, form.lanes);
  llvm::Value* v = llvm::PoisonValue::get(vec);
  if (form.splat) {
    v = b.CreateVectorSplat(form.lanes, b.CreateAlignedLoad(word, f->getArg(0), llvm::Align(1)));
  } else {
    for (unsigned k = 0; k * form.width < form.lanes; ++k) {
      llvm::Value* s = b.CreateAlignedLoad(word, b.CreateConstGEP1_64(word, f->getArg(0), k), llvm::Align(1));
      for (unsigned i = k * form.width; i < std::min(form.lanes, (k + 1) * form.width); ++i) v = b.CreateInsertElement(v, s, i);
    }
  }
  std::vector<llvm::Constant*> bits;
  for (unsigned i = 0; i < form.lanes; ++i)
    bits.push_back(llvm::ConstantInt::get(word, form.bits.empty() ? std::uint64_t(1) << (i % form.width) : form.bits[i]));
  llvm::Value* tested = b.CreateAnd(v, llvm::ConstantVector::get(bits));
  llvm::Value* zero = llvm::Constant::getNullValue(vec);
  llvm::Value* cmp = form.clear ? b.CreateICmpEQ(tested, zero) : b.CreateICmpNE(tested, zero);
  auto* bytes = llvm::FixedVectorType::get(b.getInt8Ty(), form.lanes);
  llvm::Value* sixteen = llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(form.lanes), b.getInt8(16));
  llvm::Value* none = llvm::Constant::getNullValue(bytes);
  b.CreateAlignedStore(form.clear ? b.CreateSelect(cmp, none, sixteen) : b.CreateSelect(cmp, sixteen, none), f->getArg(1),
                       llvm::Align(1));
  b.CreateRetVoid();
  return module;
}

using bits_fn = void (*)(const std::uint8_t*, std::uint8_t*);

bits_fn compile(const bit_test_form& form, int& rewritten) {
  static tg::cpu::orc_jit jit;
  static int counter = 0;
  auto context = std::make_unique<llvm::LLVMContext>();
  const std::string name = "bits" + std::to_string(counter++);
  auto module = build(*context, form, name);
  jit.prepare(*module);
  rewritten = tg::codegen::rewrite_bit_test_masks(*module);
  return reinterpret_cast<bits_fn>(jit.compile(std::move(context), std::move(module), name, false));
}

// Lane i of the form, from the words' bytes (little-endian), bit by bit.
std::uint8_t expected_lane(const bit_test_form& form, const std::uint8_t* words, unsigned i) {
  const unsigned word_bytes = form.width / 8, k = form.splat ? 0 : i / form.width;
  std::uint64_t w = 0;
  for (unsigned byte = 0; byte < word_bytes; ++byte) w |= std::uint64_t(words[k * word_bytes + byte]) << 8 * byte;
  const std::uint64_t bit = form.bits.empty() ? std::uint64_t(1) << (i % form.width) : form.bits[i];
  return (w & bit) != 0 ? 16 : 0;  // `clear` forms swap the select's arms back: the same lanes
}

}  // namespace

TEST_CASE("lanes testing one word's successive bits compute, as a mask, what the compares did") {
  const bit_test_form forms[] = {
      {32, 16},               // Q5_0 / Q5_1 decode: two 16-bit halves of the fifth-bit word
      {32, 16, false, true},  // the same as LLVM leaves it: bit clear, the select's arms swapped
      {64, 8},                // eight bytes over 64 lanes
      {16, 32, true},         // bits 0..15 of one splat 32-bit word
      {8, 64, true, true},    // bits 0..7 of a 64-bit word, bit clear
  };
  std::mt19937 rng(11);
  for (const bit_test_form& form : forms) {
    CAPTURE(form.lanes);
    CAPTURE(form.width);
    CAPTURE(form.clear);
    int rewritten = 0;
    const bits_fn fn = compile(form, rewritten);
    CHECK(rewritten == 1);
    int wrong = 0;
    for (int t = 0; t < 300; ++t) {
      std::uint8_t words[8];
      for (auto& w : words) w = std::uint8_t(t < 2 ? -t : rng());  // all clear, all set, then random
      std::uint8_t out[64] = {};
      fn(words, out);
      for (unsigned i = 0; i < form.lanes; ++i) wrong += out[i] != expected_lane(form, words, i);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("compares that are not lane-bit tests of one word per run are left as they are") {
  std::vector<std::uint64_t> reversed, doubled;
  for (unsigned i = 0; i < 32; ++i) reversed.push_back(std::uint64_t(1) << (15 - i % 16));
  for (unsigned i = 0; i < 32; ++i) doubled.push_back(std::uint64_t(3) << (i % 16) & 0xFFFF);
  const bit_test_form forms[] = {
      {32, 16, false, false, reversed},  // lane i tests bit 15 - i
      {32, 16, false, false, doubled},   // two bits a lane
  };
  for (int f = 0; f < 2; ++f) {
    int rewritten = 0;
    const bits_fn fn = compile(forms[f], rewritten);
    CHECK(rewritten == 0);
    std::uint8_t words[8] = {0x5A, 0xC3, 0x01, 0x80}, out[64] = {};
    fn(words, out);
    for (unsigned i = 0; i < 32; ++i) CHECK(out[i] == expected_lane(forms[f], words, i));
  }
  // Two words that differ inside one run of 16 lanes: lanes 0..7 from one load, 8..15 another.
  llvm::LLVMContext context;
  llvm::Module module("mixed", context);
  llvm::IRBuilder<> b(context);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {b.getInt16Ty(), b.getInt16Ty(), b.getPtrTy()}, false),
                                   llvm::Function::ExternalLinkage, "mixed", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", f));
  auto* vec = llvm::FixedVectorType::get(b.getInt16Ty(), 16);
  llvm::Value* v = llvm::PoisonValue::get(vec);
  for (unsigned i = 0; i < 16; ++i) v = b.CreateInsertElement(v, f->getArg(i < 8 ? 0 : 1), i);
  std::vector<llvm::Constant*> bits;
  for (unsigned i = 0; i < 16; ++i) bits.push_back(b.getInt16(std::uint16_t(1u << i)));
  llvm::Value* cmp = b.CreateICmpNE(b.CreateAnd(v, llvm::ConstantVector::get(bits)), llvm::Constant::getNullValue(vec));
  b.CreateStore(b.CreateZExt(cmp, llvm::FixedVectorType::get(b.getInt8Ty(), 16)), f->getArg(2));
  b.CreateRetVoid();
  CHECK(tg::codegen::rewrite_bit_test_masks(module) == 0);
}

TEST_CASE("on Zen 4 the fifth-bit test of Q5 decode is one kmovd, not broadcasts and a vptest") {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  const std::string triple = "x86_64-unknown-linux-gnu";
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  REQUIRE_MESSAGE(target != nullptr, error);
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, "znver4", "", llvm::TargetOptions(), std::nullopt));
  auto assembly = [&](bool rewrite) {
    llvm::LLVMContext context;
    auto module = build(context, {32, 16, false, true}, "fifth");
    module->setDataLayout(machine->createDataLayout());
    module->setTargetTriple(triple);
    if (rewrite) CHECK(tg::codegen::rewrite_bit_test_masks(*module) == 1);
    llvm::SmallString<0> text;
    llvm::raw_svector_ostream out(text);
    llvm::legacy::PassManager passes;
    REQUIRE_FALSE(machine->addPassesToEmitFile(passes, out, nullptr, llvm::CodeGenFileType::AssemblyFile));
    passes.run(*module);
    return std::string(text.str());
  };
  const std::string before = assembly(false), after = assembly(true);
  // LLVM's own: both halves broadcast into a 512-bit vector and tested against the bit constants.
  CHECK(before.find("vptest") != std::string::npos);
  CHECK(before.find("kmovd") == std::string::npos);
  CHECK(after.find("kmovd") != std::string::npos);
  CHECK(after.find("vptest") == std::string::npos);
  CHECK(after.find("vpbroadcastw") == std::string::npos);
}
