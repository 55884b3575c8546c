// llvm_emitter_values.cpp: values: elementwise ops, affine index tracking, loads, stores and prefetches (the emitter: llvm_emitter.hpp).
#include "runtime/codegen/llvm_emitter.hpp"
#include "runtime/codegen/x86_dot_sums.hpp"

#include <llvm/IR/Intrinsics.h>
#include <algorithm>
#include <bit>
#include <tg/core/error.hpp>

namespace tg::codegen {

llvm::Value* emitter::widen(llvm::Value* v) {
  if (!is_vec(v)) {
    llvm::Value* s = b_.CreateVectorSplat(unsigned(vec_width_), v);
    if (v->getType()->isIntegerTy(64) && !llvm::isa<llvm::Constant>(s)) affine_[s] = {v, {}};
    return s;
  }
  unsigned w = width_of(v);
  if (w == unsigned(vec_width_)) return v;
  std::vector<int> mask;
  for (int f = 0; f < vec_width_; ++f) mask.push_back(f / (vec_width_ / int(w)));
  llvm::Value* out = b_.CreateShuffleVector(v, mask);
  if (auto a = affine_of(v); a && !llvm::isa<llvm::Constant>(out)) {
    affine wide{a->base, {}};
    for (int f = 0; f < vec_width_; ++f) wide.offsets.push_back(a->at(std::size_t(mask[std::size_t(f)])));
    affine_[out] = std::move(wide);
  }
  return out;
}

lanes emitter::compute(int n) {
  const ast::node& x = nodes_[std::size_t(n)];
  switch (x.o) {
    case ast::op::constant: return splat(constant(x));
    case ast::op::variable:
      if (frame_.gpu()) return splat(f_->getArg(unsigned(frame_.buffer_args + int(x.arg))));
      return splat(b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstGEP1_64(b_.getInt64Ty(), vars_, std::uint64_t(x.arg))));
    case ast::op::range: throw usage_error(str("codegen: range ", x.arg, " is used outside its loop"));
    case ast::op::load: return load(x);
    case ast::op::store: return store(x);
    case ast::op::prefetch: return prefetch(x);
    case ast::op::reduce_sum: case ast::op::reduce_max: return reduce(x);
    default: break;
  }
  if (ast::is_unary(x.o)) {
    const lanes& a = emit(x.src[0]);
    dtype from = nodes_[std::size_t(x.src[0])].dt;
    return per_lane({&a}, [&](std::size_t l) { return unary(x, a[l], from); });
  }
  if (ast::is_binary(x.o)) {
    const lanes &a = emit(x.src[0]), &c = emit(x.src[1]);
    dtype t = nodes_[std::size_t(x.src[0])].dt;
    return per_lane({&a, &c}, [&](std::size_t l) {
      llvm::Value *p = a[l], *q = c[l];
      match(p, q);
      if (x.o == ast::op::mul && !is_float(t))  // a K-quant's sub-block dot times its scale (AVX2)
        if (llvm::Value* scaled = x86_scale_quad_sums(b_, opts_.isa, p, q)) return scaled;
      llvm::Value* r = binary(x.o, t, p, q);
      if (is_vec(r) && t == dtype::int64 && !llvm::isa<llvm::Constant>(r)) track_affine(x.o, p, q, r);
      return r;
    });
  }
  const lanes &a = emit(x.src[0]), &c = emit(x.src[1]), &d = emit(x.src[2]);
  if (x.o == ast::op::where) {
    return per_lane({&a, &c, &d}, [&](std::size_t l) {
      llvm::Value *p = c[l], *q = d[l], *cond = a[l];
      match(p, q);
      // A condition of an outer lane reduce's ranges only (emitted once, at its narrower width)
      // selects between values of the inner one: repeated over the inner lanes like them.
      if (is_vec(cond)) cond = widen(cond), p = widen(p), q = widen(q);
      return b_.CreateSelect(cond, p, q);
    });
  }
  if (x.o == ast::op::mul_add) {
    return per_lane({&a, &c, &d}, [&](std::size_t l) {
      llvm::Value *p = a[l], *q = c[l], *r = d[l];
      if (is_vec(p) || is_vec(q) || is_vec(r)) p = widen(p), q = widen(q), r = widen(r);
      return is_float(x.dt) ? b_.CreateFAdd(b_.CreateFMul(p, q), r) : b_.CreateAdd(b_.CreateMul(p, q), r);
    });
  }
  TG_UNREACHABLE("unknown ast op");
}

std::optional<emitter::affine> emitter::affine_of(llvm::Value* v) {
  if (!is_vec(v)) return affine{v, {}};
  auto it = affine_.find(v);
  if (it != affine_.end()) return it->second;
  // A constant vector (an iota plus constants, folded by the IRBuilder).
  auto* c = llvm::dyn_cast<llvm::ConstantDataVector>(v);
  if (c == nullptr || !c->getElementType()->isIntegerTy(64)) return std::nullopt;
  const std::int64_t first = std::int64_t(c->getElementAsInteger(0));
  affine a{b_.getInt64(std::uint64_t(first)), {}};
  for (unsigned e = 0; e < c->getNumElements(); ++e) a.offsets.push_back(std::int64_t(c->getElementAsInteger(e)) - first);
  return a;
}

void emitter::track_affine(ast::op o, llvm::Value* a, llvm::Value* c, llvm::Value* result) {
  auto p = affine_of(a), q = affine_of(c);
  if (!p || !q) return;
  const std::size_t w = width_of(result);
  affine r;
  auto combine = [&](auto f) {
    for (std::size_t e = 0; e < w; ++e) r.offsets.push_back(f(p->at(e), q->at(e)));
  };
  if (o == ast::op::add) {
    r.base = b_.CreateAdd(p->base, q->base);
    combine([](std::int64_t x, std::int64_t y) { return x + y; });
  } else if (o == ast::op::sub) {
    r.base = b_.CreateSub(p->base, q->base);
    combine([](std::int64_t x, std::int64_t y) { return x - y; });
  } else if (o == ast::op::mul) {
    auto* pc = llvm::dyn_cast<llvm::ConstantInt>(p->base);
    auto* qc = llvm::dyn_cast<llvm::ConstantInt>(q->base);
    const bool p_flat = p->offsets.empty() || std::all_of(p->offsets.begin(), p->offsets.end(), [](auto x) { return x == 0; });
    const bool q_flat = q->offsets.empty() || std::all_of(q->offsets.begin(), q->offsets.end(), [](auto x) { return x == 0; });
    if (q_flat && qc) {
      r.base = b_.CreateMul(p->base, q->base);
      combine([&](std::int64_t x, std::int64_t) { return x * qc->getSExtValue(); });
    } else if (p_flat && pc) {
      r.base = b_.CreateMul(p->base, q->base);
      combine([&](std::int64_t, std::int64_t y) { return y * pc->getSExtValue(); });
    } else {
      return;
    }
  } else {
    return;
  }
  affine_[result] = std::move(r);
}

llvm::Value* emitter::element_ptr(const ast::node& x, llvm::Value* index) {
  llvm::Value* base = buffer(int(x.arg));
  return b_.CreateInBoundsGEP(mem_type(x.dt), base, index);
}

llvm::Value* emitter::buffer(int slot) {
  if (frame_.gpu()) return f_->getArg(unsigned(slot));
  auto it = buffer_ptrs_.find(slot);
  if (it != buffer_ptrs_.end()) return it->second;
  auto saved = b_.saveIP();
  b_.SetInsertPoint(&f_->getEntryBlock(), f_->getEntryBlock().begin());
  llvm::Value* p = b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_64(b_.getPtrTy(), bufs_, std::uint64_t(slot)));
  b_.restoreIP(saved);
  return buffer_ptrs_[slot] = p;
}

lanes emitter::load(const ast::node& x) {
  const lanes& index = emit(x.src[0]);
  static const lanes no_valid;
  const lanes& valid = x.src[1] == ast::none ? no_valid : emit(x.src[1]);
  auto one = [&](std::size_t l) -> llvm::Value* {
    llvm::Value* idx = index[l];
    llvm::Value* ok = valid.empty() ? nullptr : valid[l];
    if (!is_vec(idx) && (ok == nullptr || !is_vec(ok))) return load_scalar(x, idx, ok);
    if (is_vec(idx) && width_of(idx) != unsigned(vec_width_)) idx = widen(idx);
    auto a = affine_of(idx);
    const std::size_t period = a ? period_of(*a, std::size_t(vec_width_)) : 0;
    if (ok == nullptr && period == 1) return load_scalar(x, a->base, nullptr);
    // One load of `count` elements from the affine base, lane f taking element pick(f).
    auto load_spread = [&](std::size_t count, auto pick) -> llvm::Value* {
      llvm::Type* t = llvm::FixedVectorType::get(mem_type(x.dt), unsigned(count));
      llvm::Value* v = to_reg(b_.CreateAlignedLoad(t, element_ptr(x, a->base), llvm::Align(std::size_t(size_bytes(x.dt)))), x.dt);
      if (count == std::size_t(vec_width_)) return v;
      std::vector<int> mask;
      for (int f = 0; f < vec_width_; ++f) mask.push_back(pick(f));
      return b_.CreateShuffleVector(v, mask);
    };
    // One vector load, repeated when shorter than the vector.
    if (ok == nullptr && period > 1) return load_spread(period, [&](int f) { return f % int(period); });
    // Each of `run` neighbouring lanes reads one element, the runs consecutive elements (an index
    // of a range outside a lane reduce: a tile row's byte of bits inside its quad lanes): one load
    // of width / run elements, each repeated over its run.
    const std::size_t run = a && ok == nullptr ? run_of(*a, std::size_t(vec_width_)) : 0;
    if (run > 1) return load_spread(std::size_t(vec_width_) / run, [&](int f) { return f / int(run); });
    // A gather: element by element.
    idx = widen(idx);
    if (ok) ok = widen(ok);
    llvm::Value* out = llvm::PoisonValue::get(llvm::FixedVectorType::get(reg_type(x.dt), unsigned(vec_width_)));
    for (int e = 0; e < vec_width_; ++e)
      out = b_.CreateInsertElement(out, load_scalar(x, b_.CreateExtractElement(idx, e), ok ? b_.CreateExtractElement(ok, e) : nullptr), e);
    return out;
  };
  if (valid.empty()) return per_lane({&index}, one);
  return per_lane({&index, &valid}, one);
}

llvm::Value* emitter::load_scalar(const ast::node& x, llvm::Value* index, llvm::Value* valid) {
  if (valid == nullptr) return to_reg(b_.CreateLoad(mem_type(x.dt), element_ptr(x, index)), x.dt);
  llvm::Value* safe = b_.CreateSelect(valid, index, b_.getInt64(0));
  llvm::Value* v = to_reg(b_.CreateLoad(mem_type(x.dt), element_ptr(x, safe)), x.dt);
  return b_.CreateSelect(valid, v, llvm::Constant::getNullValue(v->getType()));
}

lanes emitter::store(const ast::node& x) {
  const lanes &index = emit(x.src[0]), &value = emit(x.src[1]);
  llvm::BasicBlock* after = nullptr;
  if (group_lane_ != nullptr) {  // every thread of a group holds the element: the group's first stores it
    auto* first = llvm::BasicBlock::Create(ctx_, "group_store", f_);
    after = llvm::BasicBlock::Create(ctx_, "group_stored", f_);
    b_.CreateCondBr(b_.CreateICmpEQ(group_lane_, b_.getInt64(0)), first, after);
    b_.SetInsertPoint(first);
  }
  for (int l = 0; l < lane_count_; ++l) {
    bool repeat = false;  // identical lanes write the same element once
    for (int k = 0; k < l && !repeat; ++k) repeat = index[std::size_t(k)] == index[std::size_t(l)];
    if (!repeat) store_one(x, index[std::size_t(l)], value[std::size_t(l)]);
  }
  if (after != nullptr) {
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
  }
  return splat(nullptr);
}

lanes emitter::prefetch(const ast::node& x) {
  if (frame_.gpu() || !opts_.isa.prefetch) return emit(x.src[1]);  // a hint: the value is what counts
  const lanes& index = emit(x.src[0]);
  for (int l = 0; l < lane_count_; ++l) {
    bool repeat = false;
    for (int k = 0; k < l && !repeat; ++k) repeat = index[std::size_t(k)] == index[std::size_t(l)];
    if (repeat) continue;
    llvm::Value* idx = index[std::size_t(l)];
    if (is_vec(idx)) idx = b_.CreateExtractElement(idx, std::uint64_t(0));
    llvm::Value* at = b_.CreateGEP(b_.getInt8Ty(), buffer(int(x.arg)), idx);
    b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {at->getType()}, {at, b_.getInt32(0), b_.getInt32(3), b_.getInt32(1)});
  }
  return emit(x.src[1]);
}

void emitter::store_one(const ast::node& x, llvm::Value* idx, llvm::Value* v) {
  if (!is_vec(idx) && !is_vec(v)) {
    b_.CreateStore(to_mem(v, x.dt), element_ptr(x, idx));
    return;
  }
  auto a = affine_of(idx);
  if (a && is_vec(idx) && period_of(*a, width_of(idx)) == width_of(idx)) {
    b_.CreateAlignedStore(to_mem(widen(v), x.dt), element_ptr(x, a->base), llvm::Align(std::size_t(size_bytes(x.dt))));
    return;
  }
  idx = widen(idx);
  v = widen(v);
  for (int e = 0; e < vec_width_; ++e)
    b_.CreateStore(to_mem(b_.CreateExtractElement(v, e), x.dt), element_ptr(x, b_.CreateExtractElement(idx, e)));
}

}  // namespace tg::codegen
