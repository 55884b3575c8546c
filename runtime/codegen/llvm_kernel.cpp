// llvm_kernel.cpp: AST -> LLVM IR. Values are emitted on demand from the store, one per
// lane (lanes come from upcast ranges); a reduce becomes a loop with one accumulator per
// lane, or, when hinted reduce_as_lanes, one vector evaluation and a horizontal sum. The
// last upcast output range is not unrolled but becomes an LLVM vector: values that depend
// on it are <W x T>, and an index that moves by 1 along it loads and stores as one vector
// access (tracked as base + constant offsets per lane). Types and elementwise ops: llvm_value_ops.hpp.
// The output indices come from loops (the CPU) or from the thread's index (a GPU): kernel_frame.hpp.
#include "runtime/codegen/llvm_kernel.hpp"

#include "runtime/codegen/kernel_frame.hpp"

#include "runtime/codegen/llvm_value_ops.hpp"
#include "runtime/codegen/x86_dot_sums.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <algorithm>
#include <bit>
#include <deque>
#include <map>
#include <optional>
#include <tg/core/error.hpp>

namespace tg::codegen {
namespace {

using lanes = std::vector<llvm::Value*>;

class emitter : value_ops {
 public:
  emitter(llvm::Module& m, llvm::Function* f, std::span<const ast::node> nodes, int global_ranges,
          const kernel_opts& opts, const kernel_frame& frame)
      : value_ops(m), f_(f), nodes_(nodes), n_global_(global_ranges), opts_(opts), frame_(frame) {
    for (int i = 0; i < n_global_; ++i)
      if (upcast(i) > 1 && opts_.vector_lanes) vec_range_ = i;  // the innermost upcast range is the vector one
    if (vec_range_ >= 0) vec_width_ = upcast(vec_range_);
    lane_count_ = 1;
    for (int i = 0; i < n_global_; ++i)
      if (i != vec_range_) lane_count_ *= upcast(i);
  }

  void run() {
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", f_);
    b_.SetInsertPoint(entry);
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);
    b_.setFastMathFlags(fmf);
    scopes_.emplace_back();
    int store = -1;
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].o == ast::op::store) store = int(i);
    if (store < 0) throw usage_error("codegen: the kernel has no store");
    if (frame_.gpu()) {
      emit_thread_element(store);
    } else {
      auto args = f_->arg_begin();
      bufs_ = &*args++;
      vars_ = &*args++;
      begin_ = &*args++;
      end_ = &*args;
      emit_panels(store);
    }
    b_.CreateRetVoid();
  }

 private:
  int upcast(int range) const {
    return range < int(opts_.upcast.size()) && opts_.upcast[std::size_t(range)] > 1 ? opts_.upcast[std::size_t(range)] : 1;
  }
  // The lane digit of an upcast range: lanes enumerate ranges with the last one fastest.
  int lane_digit(int lane, int range) const {
    for (int r = n_global_ - 1; r > range; --r)
      if (r != vec_range_) lane /= upcast(r);
    return lane % upcast(range);
  }
  int find_range(int number) const {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].o == ast::op::range && nodes_[i].arg == number) return int(i);
    return -1;
  }

  // --- loops ---
  struct loop {
    llvm::BasicBlock *header, *body, *exit;
    llvm::PHINode* index;
    std::int64_t step = 1;
  };
  // while (i < end) { body; i += step }; the body is filled by the caller, then close_loop.
  loop open_loop(llvm::Value* start, llvm::Value* end, const char* name, std::int64_t step = 1) {
    loop l;
    l.step = step;
    auto* pre = b_.GetInsertBlock();
    l.header = llvm::BasicBlock::Create(ctx_, std::string(name) + ".head", f_);
    l.body = llvm::BasicBlock::Create(ctx_, std::string(name) + ".body", f_);
    l.exit = llvm::BasicBlock::Create(ctx_, std::string(name) + ".exit", f_);
    b_.CreateBr(l.header);
    b_.SetInsertPoint(l.header);
    l.index = b_.CreatePHI(b_.getInt64Ty(), 2, name);
    l.index->addIncoming(start, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(l.index, end), l.body, l.exit);
    b_.SetInsertPoint(l.body);
    return l;
  }
  void close_loop(loop& l) {
    auto* next = b_.CreateAdd(l.index, b_.getInt64(std::uint64_t(l.step)), "", true, true);
    l.index->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(l.header);
    b_.SetInsertPoint(l.exit);
  }

  // With kernel_opts::panel, a loop over panels of the last output range around the output loops
  // (the range's bound may not depend on an outer range then: it is the same for every row).
  void emit_panels(int store) {
    const int last = n_global_ - 1;
    if (opts_.panel <= 0 || last < 1) {
      emit_global_loops(0, store);
      return;
    }
    if (opts_.panel % upcast(last) != 0)
      throw usage_error(str("codegen: panel ", opts_.panel, " is not a multiple of the last range's upcast ", upcast(last)));
    const int bound = nodes_[std::size_t(find_range(last))].src[0];
    if (depends_on_range(bound)) throw usage_error("codegen: panels of an output range whose bound depends on another range");
    llvm::Value* trip = b_.CreateSDiv(emit(bound)[0], b_.getInt64(upcast(last)));
    const std::int64_t trips_per_panel = opts_.panel / upcast(last);
    loop p = open_loop(b_.getInt64(0), trip, "panel", trips_per_panel);
    panel_begin_ = p.index;
    llvm::Value* next = b_.CreateAdd(p.index, b_.getInt64(std::uint64_t(trips_per_panel)), "", true, true);
    panel_end_ = b_.CreateSelect(b_.CreateICmpSLT(next, trip), next, trip);
    emit_global_loops(0, store);
    close_loop(p);
  }
  bool depends_on_range(int n) const {
    if (n == ast::none) return false;
    const ast::node& x = nodes_[std::size_t(n)];
    if (x.o == ast::op::range) return true;
    for (int s : x.src)
      if (depends_on_range(s)) return true;
    return false;
  }

  void emit_global_loops(int range, int store) {
    if (range == n_global_) {
      emit(store);
      return;
    }
    int node = find_range(range);
    llvm::Value* trip = b_.CreateSDiv(emit(nodes_[std::size_t(node)].src[0])[0], b_.getInt64(upcast(range)));
    llvm::Value* start = b_.getInt64(0);
    llvm::Value* end = trip;
    if (range == 0) {  // the caller's slice of the outermost loop
      start = begin_;
      end = b_.CreateSelect(b_.CreateICmpSLT(end_, trip), end_, trip);
    } else if (range == n_global_ - 1 && panel_begin_ != nullptr) {  // this panel of the last range
      start = panel_begin_;
      end = panel_end_;
    }
    loop l = open_loop(start, end, "g");
    scopes_.emplace_back();
    llvm::Value* base = b_.CreateMul(l.index, b_.getInt64(upcast(range)), "", true, true);
    lanes v(static_cast<std::size_t>(lane_count_));
    if (range == vec_range_) {  // base + <0, 1, ..., W-1>
      std::vector<std::uint64_t> steps;
      for (int e = 0; e < vec_width_; ++e) steps.push_back(std::uint64_t(e));
      llvm::Value* iota = llvm::ConstantDataVector::get(ctx_, steps);
      llvm::Value* vec = b_.CreateAdd(b_.CreateVectorSplat(unsigned(vec_width_), base), iota, "", true, true);
      affine_[vec] = {base, steps_signed(vec_width_)};
      v.assign(v.size(), vec);
    } else {
      for (int lane = 0; lane < lane_count_; ++lane)
        v[std::size_t(lane)] = lane_digit(lane, range) == 0 ? base : b_.CreateAdd(base, b_.getInt64(lane_digit(lane, range)), "", true, true);
    }
    scopes_.back()[node] = v;
    emit_global_loops(range + 1, store);
    scopes_.pop_back();
    close_loop(l);
  }

  // The GPU frame: this thread's element (its flat index, or that / G when G threads share
  // each element), if inside the output, split into the range values. The threads of a group
  // have the same element, so they take the bounds check's branch together.
  void emit_thread_element(int store) {
    llvm::Value* id = frame_.thread_index();
    if (const int g = opts_.group_lanes; g > 1) {
      if ((g & (g - 1)) != 0 || g > 32 || !frame_.lane_swap)
        throw usage_error(str("codegen: ", g, " lanes per output element (give a power of two up to 32, on a GPU frame)"));
      group_lane_ = b_.CreateAnd(id, b_.getInt64(std::uint64_t(g - 1)), "group_lane");
      id = b_.CreateLShr(id, b_.getInt64(std::uint64_t(std::countr_zero(unsigned(g)))), "element");
    }
    if (vec_range_ >= 0) throw usage_error("codegen: vector lanes on a GPU frame (give vector_lanes = false)");
    // With upcast U on a range, a thread takes U neighbouring values of it: ceil(bound / U)
    // threads along the range (upcast_threads).
    std::vector<llvm::Value*> bounds, threads;
    llvm::Value* total = b_.getInt64(1);
    for (int r = 0; r < n_global_; ++r) {
      bounds.push_back(emit(nodes_[std::size_t(find_range(r))].src[0])[0]);
      threads.push_back(upcast(r) == 1 ? bounds.back() : upcast_threads(bounds.back(), upcast(r)));
      total = b_.CreateMul(total, threads.back(), "", true, true);
    }
    auto* body = llvm::BasicBlock::Create(ctx_, "element", f_);
    auto* done = llvm::BasicBlock::Create(ctx_, "done", f_);
    b_.CreateCondBr(b_.CreateICmpSLT(id, total), body, done);
    b_.SetInsertPoint(body);
    llvm::Value* rest = id;  // non-negative, so unsigned division is exact
    for (int r = n_global_ - 1; r >= 0; --r) {
      llvm::Value* value = r == 0 ? rest : b_.CreateURem(rest, threads[std::size_t(r)]);
      if (r > 0) rest = b_.CreateUDiv(rest, threads[std::size_t(r)]);
      scopes_.back()[find_range(r)] = upcast(r) == 1 ? splat(value) : tile_values(value, bounds[std::size_t(r)], r);
    }
    emit(store);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  // ceil(bound / u), for a bound known non-negative.
  llvm::Value* upcast_threads(llvm::Value* bound, int u) {
    llvm::Value* up = b_.CreateAdd(bound, b_.getInt64(std::uint64_t(u - 1)), "", true, true);
    return b_.CreateUDiv(up, b_.getInt64(std::uint64_t(u)));
  }
  // The U values of range r a GPU thread takes (U = upcast(r)), one per lane: base + digit for
  // base = U x its index along r. Where U does not divide the bound, the last thread's base is
  // pulled back to bound - U, so its tile overlaps the one before (those elements are computed
  // twice, by the same instructions, and stored twice with the same value) and every lane stays
  // in bounds with neighbouring lanes on neighbouring values; where the bound may be below U (a
  // symbolic one, or a constant smaller than U) each lane is also clamped to bound - 1.
  lanes tile_values(llvm::Value* index, llvm::Value* bound, int r) {
    const std::int64_t u = upcast(r);
    llvm::Value* base = b_.CreateMul(index, b_.getInt64(std::uint64_t(u)), "tile", true, true);
    auto* c = llvm::dyn_cast<llvm::ConstantInt>(bound);
    const bool divides = c != nullptr && c->getSExtValue() % u == 0;
    const bool fits = c != nullptr && c->getSExtValue() >= u;
    if (!divides) {
      llvm::Value* last = b_.CreateSub(bound, b_.getInt64(std::uint64_t(u)));
      base = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, base, last);
      if (!fits) base = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, base, b_.getInt64(0));
    }
    llvm::Value* top = fits ? nullptr : b_.CreateSub(bound, b_.getInt64(1));
    std::vector<llvm::Value*> by_digit;
    for (std::int64_t digit = 0; digit < u; ++digit) {
      llvm::Value* at = digit == 0 ? base : b_.CreateAdd(base, b_.getInt64(std::uint64_t(digit)), "", true, true);
      by_digit.push_back(top == nullptr ? at : b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, at, top));
    }
    lanes v(static_cast<std::size_t>(lane_count_));
    for (int lane = 0; lane < lane_count_; ++lane) v[std::size_t(lane)] = by_digit[std::size_t(lane_digit(lane, r))];
    return v;
  }

  static bool is_vec(llvm::Value* v) { return v->getType()->isVectorTy(); }
  static unsigned width_of(llvm::Value* v) { return llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements(); }
  // A value at the current vector width: a scalar is splat; a vector made in an enclosing
  // lane reduce (fewer lanes) repeats each element once per inner lane.
  llvm::Value* widen(llvm::Value* v) {
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
  // Both operands as vectors of the current width when either is one.
  void match(llvm::Value*& a, llvm::Value*& c) {
    if (is_vec(a) || is_vec(c)) a = widen(a), c = widen(c);
  }
  // --- values ---
  const lanes* lookup(int n) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      if (auto it = s->find(n); it != s->end()) return &it->second;
    return nullptr;
  }

  const lanes& emit(int n) {
    if (const lanes* v = lookup(n)) return *v;
    lanes v = compute(n);
    return scopes_.back()[n] = std::move(v);
  }

  // Applies f lane by lane, computing once when every source is the same in all lanes.
  template <class F>
  lanes per_lane(std::initializer_list<const lanes*> srcs, F f) {
    lanes out(static_cast<std::size_t>(lane_count_));
    for (int l = 0; l < lane_count_; ++l) {
      bool same = l > 0;
      for (const lanes* s : srcs) same = same && (*s)[std::size_t(l)] == (*s)[0];
      out[std::size_t(l)] = same ? out[0] : f(std::size_t(l));
    }
    return out;
  }
  lanes splat(llvm::Value* v) { return lanes(std::size_t(lane_count_), v); }

  lanes compute(int n) {
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
        llvm::Value* r = binary(x.o, t, p, q);
        if (is_vec(r) && t == dtype::int64 && !llvm::isa<llvm::Constant>(r)) track_affine(x.o, p, q, r);
        return r;
      });
    }
    const lanes &a = emit(x.src[0]), &c = emit(x.src[1]), &d = emit(x.src[2]);
    if (x.o == ast::op::where) {
      return per_lane({&a, &c, &d}, [&](std::size_t l) {
        llvm::Value *p = c[l], *q = d[l];
        match(p, q);
        if (is_vec(a[l])) p = widen(p), q = widen(q);
        return b_.CreateSelect(a[l], p, q);
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

  // An int64 vector known to be splat(base) + constant offsets (offsets empty: all 0). Loads
  // and stores read the offsets: <0, 1, ...> is one vector access, a repeating <0, 1, .., P-1>
  // one access of P elements broadcast (a lane reduce nested in a vector output range reads
  // its operand that way when the operand does not depend on the vector range).
  struct affine {
    llvm::Value* base;
    std::vector<std::int64_t> offsets;
    std::int64_t at(std::size_t f) const { return offsets.empty() ? 0 : offsets[f]; }
  };
  std::optional<affine> affine_of(llvm::Value* v) {
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
  // The period P when v's offsets are <0, 1, .., P-1> repeated over the vector (P = the width:
  // contiguous), else 0.
  static std::size_t period_of(const affine& a, std::size_t width) {
    auto repeats = [&](std::size_t p) {
      for (std::size_t f = 0; f < width; ++f)
        if (a.at(f) != std::int64_t(f % p)) return false;
      return true;
    };
    for (std::size_t p = 1; p < width && width % p == 0; p *= 2)
      if (repeats(p)) return p;
    return repeats(width) ? width : 0;
  }
  static std::vector<std::int64_t> steps_signed(int width) {
    std::vector<std::int64_t> steps;
    for (int e = 0; e < width; ++e) steps.push_back(e);
    return steps;
  }
  void track_affine(ast::op o, llvm::Value* a, llvm::Value* c, llvm::Value* result) {
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

  llvm::Value* element_ptr(const ast::node& x, llvm::Value* index) {
    llvm::Value* base = buffer(int(x.arg));
    return b_.CreateInBoundsGEP(mem_type(x.dt), base, index);
  }
  llvm::Value* buffer(int slot) {
    if (frame_.gpu()) return f_->getArg(unsigned(slot));
    auto it = buffer_ptrs_.find(slot);
    if (it != buffer_ptrs_.end()) return it->second;
    auto saved = b_.saveIP();
    b_.SetInsertPoint(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    llvm::Value* p = b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_64(b_.getPtrTy(), bufs_, std::uint64_t(slot)));
    b_.restoreIP(saved);
    return buffer_ptrs_[slot] = p;
  }

  lanes load(const ast::node& x) {
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
      if (ok == nullptr && period > 1) {  // one vector load, repeated when shorter than the vector
        llvm::Type* t = llvm::FixedVectorType::get(mem_type(x.dt), unsigned(period));
        llvm::Value* v = to_reg(b_.CreateAlignedLoad(t, element_ptr(x, a->base), llvm::Align(std::size_t(size_bytes(x.dt)))), x.dt);
        if (period == std::size_t(vec_width_)) return v;
        std::vector<int> mask;
        for (int f = 0; f < vec_width_; ++f) mask.push_back(f % int(period));
        return b_.CreateShuffleVector(v, mask);
      }
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
  // A gated load reads element 0 when invalid (always in bounds) and yields 0.
  llvm::Value* load_scalar(const ast::node& x, llvm::Value* index, llvm::Value* valid) {
    if (valid == nullptr) return to_reg(b_.CreateLoad(mem_type(x.dt), element_ptr(x, index)), x.dt);
    llvm::Value* safe = b_.CreateSelect(valid, index, b_.getInt64(0));
    llvm::Value* v = to_reg(b_.CreateLoad(mem_type(x.dt), element_ptr(x, safe)), x.dt);
    return b_.CreateSelect(valid, v, llvm::Constant::getNullValue(v->getType()));
  }
  lanes store(const ast::node& x) {
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
  // llvm.prefetch of the byte's line (read, keep in all cache levels), once per distinct
  // index; a vector index prefetches its first element. The address is formed without
  // inbounds: it may point past the buffer, which a prefetch allows.
  // On a GPU frame a prefetch is a no-op for now (the value passes through).
  lanes prefetch(const ast::node& x) {
    if (frame_.gpu()) return emit(x.src[1]);
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
  void store_one(const ast::node& x, llvm::Value* idx, llvm::Value* v) {
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

  lanes reduce(const ast::node& x) {
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
    // accumulators: phis in the header, scalar or vector like the values they sum
    std::vector<lanes> acc(chain ? 1 : std::size_t(copies), lanes(static_cast<std::size_t>(lane_count_)));
    {
      auto saved = b_.saveIP();
      b_.SetInsertPoint(l.header, l.header->getFirstNonPHIIt());
      for (std::size_t u = 0; u < acc.size(); ++u)
        for (std::size_t i = 0; i < acc[u].size(); ++i) {
          llvm::Value* like = values[u][i];
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
        llvm::Value* sum = accumulate(x.o, x.dt, next[into][i], values[u][i]);
        next[into][i] = in_range[u] != nullptr ? b_.CreateSelect(in_range[u], sum, next[into][i]) : sum;
      }
    }
    close_loop(l);
    for (std::size_t u = 0; u < acc.size(); ++u)
      for (std::size_t i = 0; i < acc[u].size(); ++i)
        llvm::cast<llvm::PHINode>(acc[u][i])->addIncoming(next[u][i], l.index->getIncomingBlock(1));
    lanes result = acc[0];
    for (std::size_t u = 1; u < acc.size(); ++u)
      for (std::size_t i = 0; i < result.size(); ++i) result[i] = accumulate(x.o, x.dt, result[i], acc[u][i]);
    if (split) {
      for (llvm::Value*& a : result) a = combine_group(x, a);  // every lane's part, the nested split's too
      nested_reduce_ = nullptr;
    }
    return result;
  }
  // The reduce that takes the nested lanes under split reduce x: its body, where that is a loop
  // reduce of the same kind (so the parts of both add up in one combine), else none.
  const ast::node* nested_body(const ast::node& x) const {
    if (opts_.nested_lanes <= 1) return nullptr;
    const ast::node& body = nodes_[std::size_t(x.src[0])];
    if (body.o != x.o || body.dt != x.dt || lane_reduce_width(body, nodes_[std::size_t(body.src[1])]) > 0) return nullptr;
    return &body;
  }
  // Whether the value `n` computes has a reduce loop in it (a reduce the codegen does not
  // evaluate as vector lanes). Memoized: bodies share nodes.
  bool has_loop_below(int n) {
    if (n == ast::none) return false;
    auto it = loops_below_.find(n);
    if (it != loops_below_.end()) return it->second;
    const ast::node& x = nodes_[std::size_t(n)];
    bool found = ast::is_reduce(x.o) && lane_reduce_width(x, nodes_[std::size_t(x.src[1])]) == 0;
    for (int s = 0; s < ast::source_count(x.o) && !found; ++s) found = has_loop_below(x.src[s]);
    return loops_below_[n] = found;
  }
  // A butterfly across the group: after log2(G) exchanges every thread holds the whole
  // reduce (the same value in each, so later reduces and the store may use it in any lane).
  llvm::Value* combine_group(const ast::node& x, llvm::Value* part) {
    for (int mask = opts_.group_lanes / 2; mask >= 1; mask /= 2)
      part = accumulate(x.o, x.dt, part, swap_lanes(part, mask));
    return part;
  }
  // The value of the thread at lane ^ mask, for any scalar register type: as one or two i32 words.
  llvm::Value* swap_lanes(llvm::Value* v, int mask) {
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
  // The lanes for a sum hinted reduce_as_lanes, or 0 for a loop: the hint is taken when the
  // bound is a small constant, the lanes of the vector output range and of every enclosing
  // such reduce times these stay within 64, and the sum's type is one where a reassociated
  // sum does not round differently in a way that matters (f32, integers). Inside a vector
  // output range of W lanes (integer sums only), lane f stands for output lane f / k (an
  // int8 matmul's rows in vector lanes, each summing pairs: pmaddwd, or vpdpwssd with its
  // accumulator).
  int lane_reduce_width(const ast::node& x, const ast::node& range) const {
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
  // No loop: the range becomes k vector lanes, computed once; reduces inside get vector
  // accumulators. Nested in another lane reduce of W lanes the vector has W * k lanes, lane
  // f standing for outer lane f / k and this range's value f % k (so 2 * outer + inner is
  // the contiguous <0, 1, ...>); the result has the outer W lanes, each the sum of its k
  // neighbours (for integer products of sign-extended values, x86 makes that pmaddwd).
  lanes reduce_as_lanes(const ast::node& x, int k) {
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
  // Sums each group of k neighbouring lanes of v into one of `outer` lanes. An integer result
  // is frozen (a no-op on values that are not poison): without it LLVM reassociates a sum of
  // two such pair sums (an int8 matmul adding a group's halves) into one chain of four
  // products, and x86 instruction selection then finds one pmaddwd where there were two.
  llvm::Value* horizontal(const ast::node& x, llvm::Value* v, int outer, int k) {
    if (k == 2 && !is_float(x.dt))
      if (llvm::Value* pairs = x86_pair_sums(b_, opts_.isa, v, outer)) return pairs;
    if (k == 4 && !is_float(x.dt))
      if (llvm::Value* quads = x86_quad_sums(b_, opts_.isa, v, outer)) return quads;
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

  llvm::Value* accumulate(ast::op o, dtype t, llvm::Value* acc, llvm::Value* v) {
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
  llvm::Function* f_;
  std::span<const ast::node> nodes_;
  int n_global_;
  const kernel_opts& opts_;
  const kernel_frame& frame_;
  int lane_count_ = 1;
  int vec_range_ = -1, vec_width_ = 1;
  llvm::Value *panel_begin_ = nullptr, *panel_end_ = nullptr;  // i64: this panel's trips of the last range (kernel_opts::panel)
  llvm::Value* group_lane_ = nullptr;  // i64: this thread's place in its group (GPU, group_lanes > 1)
  const ast::node* nested_reduce_ = nullptr;  // the reduce taking the nested lanes (kernel_opts::nested_lanes)
  int reduce_depth_ = 0;               // reduce loops open around the value being emitted
  std::map<int, bool> loops_below_;    // has_loop_below's answers
  std::map<llvm::Value*, affine> affine_;
  std::vector<std::pair<int, int>> lane_ranges_;  // the range node and lanes of each open lane reduce
  llvm::Value *bufs_ = nullptr, *vars_ = nullptr, *begin_ = nullptr, *end_ = nullptr;
  std::deque<std::map<int, lanes>> scopes_;  // deque: references stay valid as scopes open
  std::map<int, llvm::Value*> buffer_ptrs_;
};

}  // namespace

llvm::Function* emit_kernel(llvm::Module& module, const std::string& name, std::span<const ast::node> nodes,
                            int global_ranges, const kernel_opts& opts) {
  llvm::LLVMContext& ctx = module.getContext();
  auto* ptr = llvm::PointerType::getUnqual(ctx);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr, i64, i64}, false);
  auto* f = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  emit_kernel_body(f, nodes, global_ranges, opts, kernel_frame{});
  return f;
}

void emit_kernel_body(llvm::Function* f, std::span<const ast::node> nodes, int global_ranges, const kernel_opts& opts,
                      const kernel_frame& frame) {
  emitter(*f->getParent(), f, nodes, global_ranges, opts, frame).run();
}

kernel_arguments arguments_of(std::span<const ast::node> nodes) {
  kernel_arguments a;
  for (const ast::node& n : nodes) {
    const bool memory = n.o == ast::op::load || n.o == ast::op::store || n.o == ast::op::prefetch;
    if (memory) a.buffers = std::max(a.buffers, int(n.arg) + 1);
    if (n.o == ast::op::variable) a.vars = std::max(a.vars, int(n.arg) + 1);
  }
  return a;
}

}  // namespace tg::codegen
