// x86_dot_sums.cpp: see x86_dot_sums.hpp.
#include "runtime/codegen/x86_dot_sums.hpp"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <vector>

namespace tg::codegen {
namespace {

bool is_vec(llvm::Value* v) { return v->getType()->isVectorTy(); }
unsigned width_of(llvm::Value* v) { return llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements(); }

// The parts, concatenated pairwise into one vector.
llvm::Value* concat(llvm::IRBuilder<>& b, std::vector<llvm::Value*> parts) {
  while (parts.size() > 1) {  // pairwise
    std::vector<llvm::Value*> joined;
    for (std::size_t i = 0; i < parts.size(); i += 2) {
      std::vector<int> mask;
      for (unsigned f = 0; f < 2 * width_of(parts[i]); ++f) mask.push_back(int(f));
      joined.push_back(b.CreateShuffleVector(parts[i], parts[i + 1], mask));
    }
    parts = std::move(joined);
  }
  return parts[0];
}

// A constant vector whose every element fits an unsigned (zext) or signed byte, as <n x i8>;
// else null: a zero point multiplied into the activations (llm/model/linear_kernels.cpp).
llvm::Value* constant_bytes(llvm::IRBuilder<>& b, llvm::Constant* c, bool zext) {
  auto* type = llvm::dyn_cast<llvm::FixedVectorType>(c->getType());
  if (type == nullptr) return nullptr;
  std::vector<llvm::Constant*> elements;
  for (unsigned i = 0; i < type->getNumElements(); ++i) {
    auto* e = llvm::dyn_cast_or_null<llvm::ConstantInt>(c->getAggregateElement(i));
    if (e == nullptr) return nullptr;
    const std::int64_t v = e->getSExtValue();
    if (zext ? (v < 0 || v > 255) : (v < -128 || v > 127)) return nullptr;
    elements.push_back(llvm::ConstantInt::get(b.getInt8Ty(), std::uint64_t(v) & 0xff));
  }
  return llvm::ConstantVector::get(elements);
}

}  // namespace

// Pair sums of a product of two values of at most 16 bits, named as x86's pmaddwd (Intel
// SDM: PMADDWD) in chunks of the target's vector width, or null (another target or shape).
// Named, the sum cannot be reassociated away, and an accumulating add of it becomes
// vpdpwssd where VNNI is on (LLVM's X86 instruction selection folds the pair).
llvm::Value* x86_pair_sums(llvm::IRBuilder<>& b, const x86_isa& isa, llvm::Value* v, int outer) {
  const int chunk = isa.vector_bits / 32;  // int32 results per instruction
  auto* mul = llvm::dyn_cast<llvm::BinaryOperator>(v);
  const bool whole = chunk > 0 && outer % chunk == 0 && ((outer / chunk) & (outer / chunk - 1)) == 0;
  if (!whole || mul == nullptr || mul->getOpcode() != llvm::Instruction::Mul) return nullptr;
  auto narrow = [&](llvm::Value* side) -> llvm::Value* {  // the side as <2 outer x i16>, if it fits
    auto* ext = llvm::dyn_cast<llvm::CastInst>(side);
    if (ext == nullptr || (!llvm::isa<llvm::SExtInst>(ext) && !llvm::isa<llvm::ZExtInst>(ext))) return nullptr;
    llvm::Value* src = ext->getOperand(0);
    const unsigned bits = src->getType()->getScalarSizeInBits();
    if (bits > 16 || (bits == 16 && llvm::isa<llvm::ZExtInst>(ext))) return nullptr;
    auto* i16 = llvm::FixedVectorType::get(b.getInt16Ty(), unsigned(2 * outer));
    if (bits == 16) return src;
    return llvm::isa<llvm::SExtInst>(ext) ? b.CreateSExt(src, i16) : b.CreateZExt(src, i16);
  };
  llvm::Value *a = narrow(mul->getOperand(0)), *c = narrow(mul->getOperand(1));
  if (a == nullptr || c == nullptr) return nullptr;
  const auto id = chunk == 16 ? llvm::Intrinsic::x86_avx512_pmaddw_d_512
                : chunk == 8  ? llvm::Intrinsic::x86_avx2_pmadd_wd
                              : llvm::Intrinsic::x86_sse2_pmadd_wd;
  std::vector<llvm::Value*> parts;
  for (int at = 0; at < outer; at += chunk) {
    std::vector<int> mask;
    for (int f = 0; f < 2 * chunk; ++f) mask.push_back(2 * at + f);
    llvm::Value *pa = outer == chunk ? a : b.CreateShuffleVector(a, mask), *pc = outer == chunk ? c : b.CreateShuffleVector(c, mask);
    parts.push_back(b.CreateIntrinsic(id, {}, {pa, pc}));
  }
  return concat(b, parts);
}

// Quad sums of a product of an unsigned and a signed byte (either side may be a constant that
// fits its byte), in chunks of the target's vector width, or null (another shape, or a form the
// target lacks). With VNNI, x86's vpdpbusd (Intel SDM: VPDPBUSD; AVX-512 VNNI) with a zero
// accumulator; x86_fold_quad_sums then moves the running sum into the instruction's accumulator:
// LLVM does not fold an add into it. Without VNNI, pmaddubsw (PMADDUBSW: pair sums of the
// products as saturated int16) then pmaddwd against ones (the pairs' sums as int32), the AVX2
// form of the same dot: exact only where no pair sum saturates, so only where the unsigned side
// is known below 128 (2 * 127 * 128 < 32768): the K-quants' and Q4/Q5's small values and zero
// points, never Q8_0's offset bytes. Where it is not known the caller writes the sum out.
llvm::Value* x86_quad_sums(llvm::IRBuilder<>& b, const x86_isa& isa, llvm::Value* v, int outer) {
  // 8 sums (one 32-value group of quads) on a 512-bit target take the 256-bit form (AVX-512 VL).
  const int chunk = isa.vector_bits == 512 && outer % 16 != 0 ? 8 : isa.vector_bits / 32;
  auto* mul = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if ((chunk != 16 && chunk != 8) || outer % chunk != 0 || mul == nullptr || mul->getOpcode() != llvm::Instruction::Mul)
    return nullptr;
  auto bytes = [&](llvm::Value* side, bool zext) -> llvm::Value* {  // the side as <4 outer x i8>, if it is one
    if (auto* c = llvm::dyn_cast<llvm::Constant>(side)) return constant_bytes(b, c, zext);  // a zero point
    auto* ext = llvm::dyn_cast<llvm::CastInst>(side);
    if (ext == nullptr || (zext ? !llvm::isa<llvm::ZExtInst>(ext) : !llvm::isa<llvm::SExtInst>(ext))) return nullptr;
    llvm::Value* src = ext->getOperand(0);
    return src->getType()->getScalarSizeInBits() == 8 ? src : nullptr;
  };
  llvm::Value *u = bytes(mul->getOperand(0), true), *sgn = bytes(mul->getOperand(1), false);
  if (u == nullptr || sgn == nullptr) u = bytes(mul->getOperand(1), true), sgn = bytes(mul->getOperand(0), false);
  if (u == nullptr || sgn == nullptr) return nullptr;
  if (!isa.vnni) {
    const llvm::DataLayout& layout = b.GetInsertBlock()->getModule()->getDataLayout();
    if (!llvm::computeKnownBits(u, layout).Zero.isSignBitSet()) return nullptr;  // may reach 128: pmaddubsw could saturate
  }
  auto* words = llvm::FixedVectorType::get(b.getInt32Ty(), unsigned(chunk));
  auto* halves = llvm::FixedVectorType::get(b.getInt16Ty(), unsigned(2 * chunk));
  llvm::Value* zero = llvm::Constant::getNullValue(words);
  llvm::Value* ones = llvm::ConstantInt::get(halves, 1);
  std::vector<llvm::Value*> parts;
  for (int at = 0; at < outer; at += chunk) {
    std::vector<int> mask;
    for (int f = 0; f < 4 * chunk; ++f) mask.push_back(4 * at + f);
    llvm::Value *pu = outer == chunk ? u : b.CreateShuffleVector(u, mask), *ps = outer == chunk ? sgn : b.CreateShuffleVector(sgn, mask);
    if (isa.vnni) {
      const auto id = chunk == 16 ? llvm::Intrinsic::x86_avx512_vpdpbusd_512 : llvm::Intrinsic::x86_avx512_vpdpbusd_256;
      parts.push_back(b.CreateIntrinsic(id, {}, {zero, b.CreateBitCast(pu, words), b.CreateBitCast(ps, words)}));
      continue;
    }
    const bool wide = chunk == 16;
    llvm::Value* pairs = b.CreateIntrinsic(wide ? llvm::Intrinsic::x86_avx512_pmaddubs_w_512 : llvm::Intrinsic::x86_avx2_pmadd_ub_sw, {}, {pu, ps});
    parts.push_back(b.CreateIntrinsic(wide ? llvm::Intrinsic::x86_avx512_pmaddw_d_512 : llvm::Intrinsic::x86_avx2_pmadd_wd, {}, {pairs, ones}));
  }
  return concat(b, parts);
}
// acc + v where v is x86_quad_sums' result (vpdpbusd calls with a zero accumulator, maybe
// concatenated): the same calls accumulating onto acc's pieces; else null.
llvm::Value* x86_fold_quad_sums(llvm::IRBuilder<>& b, llvm::Value* acc, llvm::Value* v) {
  std::vector<llvm::CallInst*> calls;
  std::function<bool(llvm::Value*)> gather = [&](llvm::Value* x) {
    if (auto* call = llvm::dyn_cast<llvm::CallInst>(x)) {
      const auto id = call->getIntrinsicID();
      if ((id != llvm::Intrinsic::x86_avx512_vpdpbusd_512 && id != llvm::Intrinsic::x86_avx512_vpdpbusd_256) ||
          !llvm::isa<llvm::Constant>(call->getArgOperand(0)) || !llvm::cast<llvm::Constant>(call->getArgOperand(0))->isNullValue())
        return false;
      calls.push_back(call);
      return true;
    }
    auto* shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(x);
    if (shuffle == nullptr || !shuffle->isConcat()) return false;
    return gather(shuffle->getOperand(0)) && gather(shuffle->getOperand(1));
  };
  if (!is_vec(acc) || !gather(v)) return nullptr;
  const unsigned chunk = width_of(calls[0]);
  if (width_of(acc) != chunk * calls.size()) return nullptr;
  std::vector<llvm::Value*> parts;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    std::vector<int> mask;
    for (unsigned f = 0; f < chunk; ++f) mask.push_back(int(i * chunk + f));
    llvm::Value* piece = calls.size() == 1 ? acc : b.CreateShuffleVector(acc, mask);
    parts.push_back(b.CreateIntrinsic(calls[i]->getIntrinsicID(), {}, {piece, calls[i]->getArgOperand(1), calls[i]->getArgOperand(2)}));
  }
  return concat(b, parts);
}

namespace {

// The pmaddwd calls against ones that x86_quad_sums' AVX2 form ends in (maybe concatenated), in
// order; false when v is not one.
bool madd_ones_calls(llvm::Value* v, std::vector<llvm::CallInst*>& calls) {
  if (auto* call = llvm::dyn_cast<llvm::CallInst>(v)) {
    const auto id = call->getIntrinsicID();
    if (id != llvm::Intrinsic::x86_avx2_pmadd_wd && id != llvm::Intrinsic::x86_avx512_pmaddw_d_512) return false;
    auto* ones = llvm::dyn_cast<llvm::Constant>(call->getArgOperand(1));
    auto* one = ones != nullptr ? llvm::dyn_cast_or_null<llvm::ConstantInt>(ones->getSplatValue()) : nullptr;
    if (one == nullptr || !one->isOne()) return false;
    calls.push_back(call);
    return true;
  }
  auto* shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(v);
  return shuffle != nullptr && shuffle->isConcat() && madd_ones_calls(shuffle->getOperand(0), calls) &&
         madd_ones_calls(shuffle->getOperand(1), calls);
}

// Whether v is quad sums of that form, or a sum or difference of such values (scaled_sums' shapes).
bool scalable(llvm::Value* v) {
  std::vector<llvm::CallInst*> calls;
  if (madd_ones_calls(v, calls)) return true;
  auto* op = llvm::dyn_cast<llvm::BinaryOperator>(v);
  return op != nullptr && (op->getOpcode() == llvm::Instruction::Add || op->getOpcode() == llvm::Instruction::Sub) &&
         scalable(op->getOperand(0)) && scalable(op->getOperand(1));
}

// v (quad sums, or a sum or difference of them) times the scale whose int16 value pairs are
// `pairs` (<2N x i16>: each of v's N lanes' scale twice), as the same pmaddwd calls taking the
// pairs where they took ones; null when v is none of these.
llvm::Value* scaled_sums(llvm::IRBuilder<>& b, llvm::Value* v, llvm::Value* pairs) {
  std::vector<llvm::CallInst*> calls;
  if (madd_ones_calls(v, calls)) {
    const unsigned chunk = width_of(calls[0]->getArgOperand(1));  // int16 lanes per call
    if (chunk * calls.size() != width_of(pairs)) return nullptr;
    std::vector<llvm::Value*> parts;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      std::vector<int> mask;
      for (unsigned f = 0; f < chunk; ++f) mask.push_back(int(i * chunk + f));
      llvm::Value* piece = calls.size() == 1 ? pairs : b.CreateShuffleVector(pairs, mask);
      parts.push_back(b.CreateIntrinsic(calls[i]->getIntrinsicID(), {}, {calls[i]->getArgOperand(0), piece}));
    }
    return concat(b, parts);
  }
  auto* op = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (op == nullptr || (op->getOpcode() != llvm::Instruction::Add && op->getOpcode() != llvm::Instruction::Sub)) return nullptr;
  llvm::Value* left = scaled_sums(b, op->getOperand(0), pairs);
  llvm::Value* right = left != nullptr ? scaled_sums(b, op->getOperand(1), pairs) : nullptr;
  if (right == nullptr) return nullptr;
  return op->getOpcode() == llvm::Instruction::Add ? b.CreateAdd(left, right) : b.CreateSub(left, right);
}

}  // namespace

llvm::Value* x86_narrow_quad_sums(llvm::IRBuilder<>& b, llvm::Value* v, std::int64_t count, unsigned& chunk) {
  std::vector<llvm::CallInst*> calls;
  if (count <= 0 || !madd_ones_calls(v, calls)) return nullptr;
  const llvm::DataLayout& layout = b.GetInsertBlock()->getModule()->getDataLayout();
  std::vector<llvm::Value*> pairs;
  for (llvm::CallInst* madd : calls) {
    auto* ubsw = llvm::dyn_cast<llvm::CallInst>(madd->getArgOperand(0));
    const auto id = ubsw != nullptr ? ubsw->getIntrinsicID() : llvm::Intrinsic::not_intrinsic;
    if (id != llvm::Intrinsic::x86_avx2_pmadd_ub_sw && id != llvm::Intrinsic::x86_avx512_pmaddubs_w_512) return nullptr;
    // A pair sum is at most 2 u 128 in magnitude (u the unsigned byte's bound, the signed byte
    // down to -128); `count` of them must stay within int16.
    const std::int64_t u = (std::int64_t(1) << llvm::computeKnownBits(ubsw->getArgOperand(0), layout).countMaxActiveBits()) - 1;
    if (count * 2 * u * 128 > 32767) return nullptr;
    pairs.push_back(ubsw);
  }
  chunk = width_of(pairs[0]);
  return concat(b, pairs);
}

llvm::Value* x86_widen_pair_sums(llvm::IRBuilder<>& b, llvm::Value* pairs, unsigned chunk) {
  const unsigned n = width_of(pairs);
  if (chunk == 0 || n % chunk != 0) return nullptr;
  const auto id = chunk == 32 ? llvm::Intrinsic::x86_avx512_pmaddw_d_512 : llvm::Intrinsic::x86_avx2_pmadd_wd;
  llvm::Value* ones = llvm::ConstantInt::get(llvm::FixedVectorType::get(b.getInt16Ty(), chunk), 1);
  std::vector<llvm::Value*> parts;
  for (unsigned at = 0; at < n; at += chunk) {
    std::vector<int> mask;
    for (unsigned f = 0; f < chunk; ++f) mask.push_back(int(at + f));
    parts.push_back(b.CreateIntrinsic(id, {}, {n == chunk ? pairs : b.CreateShuffleVector(pairs, mask), ones}));
  }
  return concat(b, parts);
}

// a * c where one is x86_quad_sums' AVX2 result (pmaddwd of the byte pairs' sums against ones)
// and the other an int32 scale that fits 16 bits (the K-quants' sub-block scales): the pmaddwd
// takes the scale in place of the ones, pmaddwd(p, s) = p0 s + p1 s = (p0 + p1) s, the same int32
// (modulo 2^32, as the multiply is), so the vpmulld goes (ggml's AVX2 K-quant dots,
// ggml-cpu/arch/x86/quants.c, multiply by their scales the same way). A sum or difference of
// such results (a zero point's dot subtracted) distributes. Null where neither side fits.
llvm::Value* x86_scale_quad_sums(llvm::IRBuilder<>& b, const x86_isa& isa, llvm::Value* a, llvm::Value* c) {
  // Only x86_quad_sums' AVX2 form makes such sums: other targets, and VNNI, never look further.
  if (isa.vector_bits == 0 || isa.vnni || !is_vec(a) || a->getType() != c->getType() ||
      !a->getType()->getScalarType()->isIntegerTy(32))
    return nullptr;
  const llvm::DataLayout& layout = b.GetInsertBlock()->getModule()->getDataLayout();
  for (auto [sums, scale] : {std::pair{a, c}, std::pair{c, a}}) {
    if (!scalable(sums) || llvm::ComputeNumSignBits(scale, layout) < 17) continue;  // not a 16-bit value
    const unsigned n = width_of(scale);
    std::vector<int> twice;
    for (unsigned f = 0; f < 2 * n; ++f) twice.push_back(int(f / 2));
    llvm::Value* narrow = b.CreateTrunc(scale, llvm::FixedVectorType::get(b.getInt16Ty(), n));
    if (llvm::Value* out = scaled_sums(b, sums, b.CreateShuffleVector(narrow, twice))) return out;
  }
  return nullptr;
}

}  // namespace tg::codegen
