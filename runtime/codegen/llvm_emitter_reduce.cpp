// llvm_emitter_reduce.cpp: reduces: loops with per-lane accumulators, group splits across GPU lanes, reduces as vector lanes and their horizontal sums (the emitter: llvm_emitter.hpp).
#include "runtime/codegen/llvm_emitter.hpp"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Support/KnownBits.h>
#include <algorithm>
#include <bit>
#include <set>
#include <tg/core/error.hpp>
#include "runtime/codegen/x86_dot_sums.hpp"

namespace tg::codegen {

lanes emitter::reduce(const ast::node& x) {
  // Reduces in the body that do not depend on this one's range (the row maximum inside a sum of
  // exponentials) are computed once, here, before the loop: not once per trip. Emitted at this
  // depth, a top-level one is split across the group like any other.
  for (int inner : invariant_reduces(x)) emit(inner);
  const ast::node& r = nodes_[std::size_t(x.src[1])];
  // The group's threads split a top-level reduce (one not inside another's loop) between them,
  // a lane-hinted one too: what the CPU lays out as vector lanes, a GPU lays out as threads.
  const bool split = group_lane_ != nullptr && reduce_depth_ == 0;
  // The reduce directly inside a split one, taking the group's nested lanes (kernel_opts::nested_lanes).
  const bool nested = group_lane_ != nullptr && &x == nested_reduce_;
  if (int w = lane_reduce_width(x, r); w > 0 && !split) return reduce_as_lanes(x, w);
  if (split) nested_reduce_ = nested_body(x);
  const std::int64_t outer_lanes = opts_.group_lanes / (nested_reduce_ != nullptr ? opts_.nested_lanes : 1);
  llvm::Value* bound = emit(r.src[0])[0];
  llvm::Type* t = reg_type(x.dt);
  llvm::Value* identity = x.o == ast::op::reduce_sum ? llvm::Constant::getNullValue(t) : lowest(x.dt);
  // Each thread takes `copies` iterations `spacing` apart per trip (G for the split reduce, 1
  // for an innermost loop), with an accumulator each: that many independent loads in flight
  // per wait. A copy past the bound evaluates the trip's first iteration (so its loads stay
  // in bounds) and is not accumulated.
  const std::int64_t spacing = split ? outer_lanes : nested ? opts_.nested_lanes : 1;
  // On a GPU frame without groups (a matmul's register tile: kernel_opts::upcast) the innermost
  // loops take copies too, into one accumulator per lane: the loads of a trip are independent
  // and in flight together, and the tile's lanes already give the adds independent chains.
  int copies = 1;
  auto* constant_bound = llvm::dyn_cast<llvm::ConstantInt>(bound);
  if (frame_.gpu() && (split || nested || !has_loop_below(x.src[0]))) {
    copies = std::max(1, opts_.reduce_unroll);
    if (constant_bound != nullptr)  // no copy that can never be in range
      copies = int(std::clamp<std::int64_t>((constant_bound->getSExtValue() + spacing - 1) / spacing, 1, copies));
  }
  const bool chain = group_lane_ == nullptr && copies > 1;
  // Every trip whole when a constant bound is a multiple of spacing x copies (each thread
  // starts below `spacing`): no copy needs its range check.
  const bool whole = constant_bound != nullptr && constant_bound->getSExtValue() % (spacing * copies) == 0;
  auto* pre = b_.GetInsertBlock();
  llvm::Value* start = b_.getInt64(0);
  if (split) start = outer_lanes == opts_.group_lanes ? group_lane_ : b_.CreateAnd(group_lane_, b_.getInt64(std::uint64_t(outer_lanes - 1)));
  if (nested) start = b_.CreateLShr(group_lane_, b_.getInt64(std::uint64_t(std::countr_zero(std::uint64_t(outer_lanes)))));
  loop l = open_loop(start, bound, "r", spacing * copies);
  std::vector<lanes> values(static_cast<std::size_t>(copies));
  std::vector<llvm::Value*> in_range(static_cast<std::size_t>(copies), nullptr);
  ++reduce_depth_;
  for (int u = 0; u < copies; ++u) {
    llvm::Value* index = l.index;
    if (u > 0) {
      llvm::Value* at = b_.CreateAdd(l.index, b_.getInt64(std::uint64_t(u * spacing)), "", true, true);
      if (!whole) {
        in_range[std::size_t(u)] = b_.CreateICmpSLT(at, bound);
        at = b_.CreateSelect(in_range[std::size_t(u)], at, l.index);
      }
      index = at;
    }
    scopes_.emplace_back();
    scopes_.back()[x.src[1]] = splat(index);
    values[std::size_t(u)] = emit(x.src[0]);
    scopes_.pop_back();
  }
  --reduce_depth_;
  // Without VNNI, byte quads' int16 pair sums (pmaddubsw) add up in the loop as int16 where its
  // constant bound keeps them there, and are widened to int32 once after it
  // (x86_dot_sums.hpp: x86_narrow_quad_sums): a trip's pmaddwd and vpaddd become one vpaddw.
  std::vector<unsigned> narrow_chunks;
  if (copies == 1 && !split && !nested && constant_bound != nullptr && x.o == ast::op::reduce_sum && !is_float(x.dt)) {
    lanes narrowed;
    for (llvm::Value* v : values[0]) {
      unsigned chunk = 0;
      llvm::Value* pairs = x86_narrow_quad_sums(b_, v, constant_bound->getSExtValue(), chunk);
      if (pairs == nullptr) break;
      narrowed.push_back(pairs);
      narrow_chunks.push_back(chunk);
    }
    if (narrowed.size() == values[0].size()) values[0] = narrowed;
    else narrow_chunks.clear();
  }
  // accumulators: phis in the header, scalar or vector like the values they sum
  std::vector<lanes> acc(chain ? 1 : std::size_t(copies), lanes(static_cast<std::size_t>(lane_count_)));
  {
    auto saved = b_.saveIP();
    b_.SetInsertPoint(l.header, l.header->getFirstNonPHIIt());
    for (std::size_t u = 0; u < acc.size(); ++u)
      for (std::size_t i = 0; i < acc[u].size(); ++i) {
        llvm::Value* like = values[u][i];
        if (!narrow_chunks.empty()) {  // int16 pairs: their own type, from zero
          auto* phi = b_.CreatePHI(like->getType(), 2, "acc16");
          phi->addIncoming(llvm::Constant::getNullValue(like->getType()), pre);
          acc[u][i] = phi;
          continue;
        }
        auto* phi = b_.CreatePHI(shaped(t, like), 2, "acc");
        phi->addIncoming(is_vec(like) ? b_.CreateVectorSplat(width_of(like), identity) : identity, pre);
        acc[u][i] = phi;
      }
    b_.restoreIP(saved);
  }
  std::vector<lanes> next = acc;
  for (std::size_t u = 0; u < values.size(); ++u) {
    const std::size_t into = chain ? 0 : u;
    for (std::size_t i = 0; i < next[into].size(); ++i) {
      // A copy past the bound is dropped. In a chain it adds the identity: a select on the one
      // accumulator put every copy's add, and so its loads, behind the previous copy's (the
      // AMDGPU backend then waited for each load apart: a 4-copy walk took 8 waits where 2 do).
      // Split reduces keep the select on their own accumulators (masking their values instead
      // made decode's one-kernel attention 2x slower in the model).
      llvm::Value* v = values[u][i];
      const bool masked = in_range[u] != nullptr;
      if (masked && chain) v = b_.CreateSelect(in_range[u], v, is_vec(v) ? b_.CreateVectorSplat(width_of(v), identity) : identity);
      llvm::Value* sum = accumulate(x.o, x.dt, next[into][i], v);
      next[into][i] = masked && !chain ? b_.CreateSelect(in_range[u], sum, next[into][i]) : sum;
    }
  }
  close_loop(l);
  for (std::size_t u = 0; u < acc.size(); ++u)
    for (std::size_t i = 0; i < acc[u].size(); ++i)
      llvm::cast<llvm::PHINode>(acc[u][i])->addIncoming(next[u][i], l.index->getIncomingBlock(1));
  lanes result = acc[0];
  for (std::size_t i = 0; i < narrow_chunks.size(); ++i) result[i] = x86_widen_pair_sums(b_, result[i], narrow_chunks[i]);
  for (std::size_t u = 1; u < acc.size(); ++u)
    for (std::size_t i = 0; i < result.size(); ++i) result[i] = accumulate(x.o, x.dt, result[i], acc[u][i]);
  if (split) {
    for (llvm::Value*& a : result) a = combine_group(x, a);  // every lane's part, the nested split's too
    nested_reduce_ = nullptr;
  }
  return result;
}

std::vector<int> emitter::invariant_reduces(const ast::node& x) const {
  std::vector<int> found;
  std::set<int> seen;
  // n's subtree, inside the loops of the ranges in `bound`: a reduce that uses none of them is
  // found (its own inside comes with it); one that does binds its range for what it holds.
  auto walk = [&](auto&& self, int n, std::vector<int>& bound) -> void {
    if (n == ast::none || !seen.insert(n).second) return;
    const ast::node& y = nodes_[std::size_t(n)];
    if (ast::is_reduce(y.o)) {
      if (!uses_range(n, bound)) {
        found.push_back(n);
        return;
      }
      bound.push_back(y.src[1]);
      self(self, y.src[0], bound);
      bound.pop_back();
      return;
    }
    for (int s = 0; s < ast::source_count(y.o); ++s) self(self, y.src[s], bound);
  };
  std::vector<int> bound = {x.src[1]};
  walk(walk, x.src[0], bound);
  return found;
}

bool emitter::uses_range(int n, const std::vector<int>& ranges) const {
  std::set<int> seen;
  auto walk = [&](auto&& self, int m) -> bool {
    if (m == ast::none || !seen.insert(m).second) return false;
    if (std::find(ranges.begin(), ranges.end(), m) != ranges.end()) return true;
    const ast::node& y = nodes_[std::size_t(m)];
    for (int s = 0; s < ast::source_count(y.o); ++s)
      if (self(self, y.src[s])) return true;
    return false;
  };
  return walk(walk, n);
}

const ast::node* emitter::nested_body(const ast::node& x) const {
  if (opts_.nested_lanes <= 1) return nullptr;
  const ast::node& body = nodes_[std::size_t(x.src[0])];
  if (body.o != x.o || body.dt != x.dt || lane_reduce_width(body, nodes_[std::size_t(body.src[1])]) > 0) return nullptr;
  return &body;
}

bool emitter::has_loop_below(int n) {
  if (n == ast::none) return false;
  auto it = loops_below_.find(n);
  if (it != loops_below_.end()) return it->second;
  const ast::node& x = nodes_[std::size_t(n)];
  bool found = ast::is_reduce(x.o) && lane_reduce_width(x, nodes_[std::size_t(x.src[1])]) == 0;
  for (int s = 0; s < ast::source_count(x.o) && !found; ++s) found = has_loop_below(x.src[s]);
  return loops_below_[n] = found;
}

llvm::Value* emitter::combine_group(const ast::node& x, llvm::Value* part) {
  for (int mask = opts_.group_lanes / 2; mask >= 1; mask /= 2)
    part = accumulate(x.o, x.dt, part, swap_lanes(part, mask));
  return part;
}

llvm::Value* emitter::swap_lanes(llvm::Value* v, int mask) {
  llvm::Type* t = v->getType();
  if (t->isVectorTy()) throw usage_error("codegen: a vector accumulator in a reduce split across lanes");
  const unsigned bits = t->getPrimitiveSizeInBits();
  llvm::Type* word = b_.getInt32Ty();
  llvm::Value* as_int = t->isIntegerTy() ? v : b_.CreateBitCast(v, b_.getIntNTy(bits));
  if (bits <= 32) {
    llvm::Value* w = bits == 32 ? as_int : b_.CreateZExt(as_int, word);
    llvm::Value* got = frame_.lane_swap(b_, w, mask);
    llvm::Value* back = bits == 32 ? got : b_.CreateTrunc(got, b_.getIntNTy(bits));
    return t->isIntegerTy() ? back : b_.CreateBitCast(back, t);
  }
  if (bits != 64) throw usage_error(str("codegen: a ", bits, "-bit accumulator in a reduce split across lanes"));
  llvm::Value* lo = frame_.lane_swap(b_, b_.CreateTrunc(as_int, word), mask);
  llvm::Value* hi = frame_.lane_swap(b_, b_.CreateTrunc(b_.CreateLShr(as_int, b_.getInt64(32)), word), mask);
  llvm::Value* joined = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), b_.getInt64(32)));
  return t->isIntegerTy() ? joined : b_.CreateBitCast(joined, t);
}

int emitter::lane_reduce_width(const ast::node& x, const ast::node& range) const {
  if (x.arg != ast::reduce_as_lanes || x.o != ast::op::reduce_sum) return 0;
  if (vec_range_ >= 0 && is_float(x.dt)) return 0;  // float sums there keep their loop (and rounding)
  if (x.dt == dtype::float16 || x.dt == dtype::bfloat16 || x.dt == dtype::float64 || x.dt == dtype::bool_) return 0;
  const ast::node& bound = nodes_[std::size_t(range.src[0])];
  // 64 lanes, or 128 for an integer quad sum inside a vector range (a tile of 32 rows of
  // byte dot products: x86 vpdpbusd, 4 products per lane).
  const int most = bound.arg == 4 && vec_range_ >= 0 && !is_float(x.dt) ? 128 : 64;
  if (bound.o != ast::op::constant || bound.arg < 2 || vec_width_ * bound.arg > most) return 0;
  return int(bound.arg);
}

lanes emitter::reduce_as_lanes(const ast::node& x, int k) {
  const int outer = vec_width_;
  vec_width_ = outer * k;
  scopes_.emplace_back();
  auto lane_values = [&](auto value_of) {
    std::vector<std::uint64_t> values;
    for (int f = 0; f < vec_width_; ++f) values.push_back(std::uint64_t(value_of(f)));
    return llvm::ConstantDataVector::get(ctx_, values);
  };
  int inner = k;  // lanes of the ranges inside each enclosing one, innermost first
  for (auto it = lane_ranges_.rbegin(); it != lane_ranges_.rend(); ++it) {
    const int width = it->second, stride = inner;
    scopes_.back()[it->first] = splat(lane_values([&](int f) { return (f / stride) % width; }));
    inner *= width;
  }
  scopes_.back()[x.src[1]] = splat(lane_values([&](int f) { return f % k; }));
  lane_ranges_.push_back({x.src[1], k});
  ++reduce_depth_;  // reduces inside are per vector lane, not split across a group
  const lanes& v = emit(x.src[0]);
  --reduce_depth_;
  lanes out = per_lane({&v}, [&](std::size_t l) { return horizontal(x, widen(v[l]), outer, k); });
  lane_ranges_.pop_back();
  scopes_.pop_back();
  vec_width_ = outer;
  return out;
}

llvm::Value* emitter::horizontal(const ast::node& x, llvm::Value* v, int outer, int k) {
  if (k == 2 && !is_float(x.dt))
    if (llvm::Value* pairs = x86_pair_sums(b_, opts_.isa, v, outer)) return pairs;
  if (k == 4 && !is_float(x.dt))
    if (llvm::Value* quads = x86_quad_sums(b_, opts_.isa, v, outer)) return quads;
  if (k == 4 && outer == 1 && !is_float(x.dt) && frame_.dot4)
    if (llvm::Value* dot = gpu_dot4(v)) return dot;
  if (outer == 1) {
    if (!is_float(x.dt)) return b_.CreateAddReduce(v);
    auto* sum = llvm::cast<llvm::Instruction>(
        b_.CreateFAddReduce(llvm::ConstantFP::getNegativeZero(v->getType()->getScalarType()), v));
    sum->setHasAllowReassoc(true);  // a tree of shuffles and adds, not a lane-by-lane chain
    return sum;
  }
  llvm::Value* out = nullptr;
  for (int r = 0; r < k; ++r) {
    std::vector<int> mask;
    for (int o = 0; o < outer; ++o) mask.push_back(o * k + r);
    llvm::Value* part = b_.CreateShuffleVector(v, mask);
    out = out == nullptr ? part : binary(ast::op::add, x.dt, out, part);
  }
  return is_float(x.dt) ? out : b_.CreateFreeze(out);
}

llvm::Value* emitter::gpu_dot4(llvm::Value* v) {
  auto* mul = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (mul == nullptr || mul->getOpcode() != llvm::Instruction::Mul || !v->getType()->getScalarType()->isIntegerTy(32))
    return nullptr;
  const llvm::DataLayout& layout = f_->getParent()->getDataLayout();
  auto* bytes_type = llvm::FixedVectorType::get(b_.getInt8Ty(), 4);
  // A side as four bytes and whether they are signed: a widened byte vector as it is; another
  // value (the side, or what was widened) where its bits say each lane fits a byte: unsigned when
  // at most its low 8 bits can be set (Q4_K's nibbles), signed when at least all but the low 7
  // repeat the sign (Q6_K's q - 32).
  auto as_bytes = [&](llvm::Value* side, llvm::Value*& out, bool& is_signed) {
    llvm::Value* src = side;
    bool zero_extended = false;  // then src's bits are an unsigned value: it cannot be a signed byte
    if (auto* ext = llvm::dyn_cast<llvm::CastInst>(side); ext != nullptr && (llvm::isa<llvm::SExtInst>(ext) || llvm::isa<llvm::ZExtInst>(ext))) {
      src = ext->getOperand(0);
      zero_extended = llvm::isa<llvm::ZExtInst>(ext);
      if (src->getType()->getScalarSizeInBits() == 8) {
        out = src, is_signed = !zero_extended;
        return true;
      }
    }
    const unsigned bits = src->getType()->getScalarSizeInBits();
    if (llvm::computeKnownBits(src, layout).countMaxActiveBits() <= 8) is_signed = false;
    else if (!zero_extended && llvm::ComputeNumSignBits(src, layout) + 7 >= bits) is_signed = true;
    else return false;
    out = b_.CreateTrunc(src, bytes_type);
    return true;
  };
  llvm::Value *a = nullptr, *c = nullptr;
  bool a_signed = false, c_signed = false;
  if (!as_bytes(mul->getOperand(0), a, a_signed) || !as_bytes(mul->getOperand(1), c, c_signed)) return nullptr;
  return frame_.dot4(b_, b_.CreateBitCast(a, b_.getInt32Ty()), a_signed, b_.CreateBitCast(c, b_.getInt32Ty()), c_signed);
}

llvm::Value* emitter::accumulate(ast::op o, dtype t, llvm::Value* acc, llvm::Value* v) {
  if (o == ast::op::reduce_max) return binary(ast::op::max, t, acc, v);
  if (!is_float(t)) {
    if (llvm::Value* folded = x86_fold_quad_sums(b_, acc, v)) return folded;
    return b_.CreateAdd(acc, v);
  }
  auto* sum = llvm::cast<llvm::Instruction>(b_.CreateFAdd(acc, v));
  // Without a vector range, let the loop vectorizer split each sum into partial sums (a
  // row sum, a matvec, or several scalar lanes sharing one weight). With a vector range
  // the lanes are the vector: keep the reduce loop scalar rather than gather along it.
  if (vec_range_ < 0 && !is_vec(v)) {
    llvm::FastMathFlags fmf = sum->getFastMathFlags();
    fmf.setAllowReassoc(true);
    sum->setFastMathFlags(fmf);
  }
  return sum;
}

}  // namespace tg::codegen
