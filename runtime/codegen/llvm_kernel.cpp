// llvm_kernel.cpp: AST -> LLVM IR. Values are emitted on demand from the store, one per
// lane (lanes come from upcast ranges); a reduce becomes a loop with one accumulator per
// lane. The last upcast output range is not unrolled but becomes an LLVM vector: values
// that depend on it are <W x T>, and an index that moves by 1 along it loads and stores
// as one vector access (tracked as base + stride * lane). 16-bit floats and bools are
// widened in registers (float, i1) and narrowed in memory.
#include "llvm_kernel.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <deque>
#include <map>
#include <optional>
#include <tg/error.hpp>

namespace tg::codegen {
namespace {

using lanes = std::vector<llvm::Value*>;

class emitter {
 public:
  emitter(llvm::Module& m, llvm::Function* f, std::span<const ast::node> nodes, int global_ranges,
          const kernel_opts& opts)
      : m_(m), ctx_(m.getContext()), b_(ctx_), f_(f), nodes_(nodes), n_global_(global_ranges), opts_(opts) {
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
    auto args = f_->arg_begin();
    bufs_ = &*args++;
    vars_ = &*args++;
    begin_ = &*args++;
    end_ = &*args;
    scopes_.emplace_back();
    int store = -1;
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].o == ast::op::store) store = int(i);
    if (store < 0) throw usage_error("codegen: the kernel has no store");
    emit_global_loops(0, store);
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
  };
  // while (i < end) { body; i += 1 }; the body is filled by the caller, then close_loop.
  loop open_loop(llvm::Value* start, llvm::Value* end, const char* name) {
    loop l;
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
    auto* next = b_.CreateAdd(l.index, b_.getInt64(1), "", true, true);
    l.index->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(l.header);
    b_.SetInsertPoint(l.exit);
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
      affine_[vec] = {base, 1};
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

  // --- types ---
  llvm::Type* reg_type(dtype t) {
    switch (t) {
      case dtype::bool_: return b_.getInt1Ty();
      case dtype::int8: case dtype::uint8: return b_.getInt8Ty();
      case dtype::int16: case dtype::uint16: return b_.getInt16Ty();
      case dtype::int32: case dtype::uint32: return b_.getInt32Ty();
      case dtype::int64: return b_.getInt64Ty();
      case dtype::float16: case dtype::bfloat16: case dtype::float32: return b_.getFloatTy();
      case dtype::float64: return b_.getDoubleTy();
    }
    TG_UNREACHABLE("dtype");
  }
  llvm::Type* mem_type(dtype t) {
    switch (t) {
      case dtype::bool_: return b_.getInt8Ty();
      case dtype::float16: return b_.getHalfTy();
      case dtype::bfloat16: return b_.getInt16Ty();
      default: return reg_type(t);
    }
  }
  // A scalar type, or its vector form when `like` is a vector.
  llvm::Type* shaped(llvm::Type* scalar, llvm::Value* like) {
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType()))
      return llvm::FixedVectorType::get(scalar, vt->getNumElements());
    return scalar;
  }
  static bool is_vec(llvm::Value* v) { return v->getType()->isVectorTy(); }
  llvm::Value* widen(llvm::Value* v) { return is_vec(v) ? v : b_.CreateVectorSplat(unsigned(vec_width_), v); }
  // Both operands as vectors when either is one.
  void match(llvm::Value*& a, llvm::Value*& c) {
    if (is_vec(a) != is_vec(c)) a = widen(a), c = widen(c);
  }
  llvm::Value* int_const(llvm::Value* like, std::uint64_t v) { return llvm::ConstantInt::get(like->getType(), v); }

  llvm::Value* to_reg(llvm::Value* v, dtype t) {
    switch (t) {
      case dtype::bool_: return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
      case dtype::float16: return b_.CreateFPExt(v, shaped(b_.getFloatTy(), v));
      case dtype::bfloat16:
        return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, shaped(b_.getInt32Ty(), v)), 16), shaped(b_.getFloatTy(), v));
      default: return v;
    }
  }
  llvm::Value* to_mem(llvm::Value* v, dtype t) {
    switch (t) {
      case dtype::bool_: return b_.CreateZExt(v, shaped(b_.getInt8Ty(), v));
      case dtype::float16: return b_.CreateFPTrunc(v, shaped(b_.getHalfTy(), v));
      case dtype::bfloat16: {  // round to nearest even, NaN stays NaN
        llvm::Value* bits = b_.CreateBitCast(v, shaped(b_.getInt32Ty(), v));
        llvm::Value* odd = b_.CreateAnd(b_.CreateLShr(bits, 16), int_const(bits, 1));
        llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(odd, int_const(bits, 0x7FFF))), 16);
        llvm::Value* nan = b_.CreateFCmpUNO(v, v);
        llvm::Value* quiet = b_.CreateOr(b_.CreateLShr(bits, 16), int_const(bits, 0x40));
        return b_.CreateTrunc(b_.CreateSelect(nan, quiet, rounded), shaped(b_.getInt16Ty(), v));
      }
      default: return v;
    }
  }
  // Rounds a widened 16-bit float to its precision (a cast to float16/bfloat16).
  llvm::Value* round_to(llvm::Value* v, dtype t) {
    if (t != dtype::float16 && t != dtype::bfloat16) return v;
    return to_reg(to_mem(v, t), t);
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

  llvm::Value* constant(const ast::node& x) {
    llvm::Type* t = reg_type(x.dt);
    if (x.dt == dtype::float16) return llvm::ConstantFP::get(t, double(float(half(float(x.value)))));
    if (x.dt == dtype::bfloat16) return llvm::ConstantFP::get(t, double(float(bfloat16(float(x.value)))));
    if (is_float(x.dt)) return llvm::ConstantFP::get(t, x.value);
    return llvm::ConstantInt::get(t, std::uint64_t(x.arg), is_signed_int(x.dt));
  }

  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::Value* a, llvm::Value* b = nullptr) {
    llvm::Function* fn = llvm::Intrinsic::getDeclaration(&m_, id, {a->getType()});
    if (b) return b_.CreateCall(fn, {a, b});
    return b_.CreateCall(fn, {a});
  }

  lanes compute(int n) {
    const ast::node& x = nodes_[std::size_t(n)];
    switch (x.o) {
      case ast::op::constant: return splat(constant(x));
      case ast::op::variable:
        return splat(b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstGEP1_64(b_.getInt64Ty(), vars_, std::uint64_t(x.arg))));
      case ast::op::range: throw usage_error(str("codegen: range ", x.arg, " is used outside its loop"));
      case ast::op::load: return load(x);
      case ast::op::store: return store(x);
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
        if (is_vec(r) && t == dtype::int64) track_affine(x.o, a[l], c[l], r);
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

  // An int64 vector known to be base + stride * <0, 1, ...>.
  struct affine {
    llvm::Value* base;
    std::int64_t stride;
  };
  std::optional<affine> affine_of(llvm::Value* v) {
    if (!is_vec(v)) return affine{v, 0};
    auto it = affine_.find(v);
    if (it == affine_.end()) return std::nullopt;
    return it->second;
  }
  void track_affine(ast::op o, llvm::Value* a, llvm::Value* c, llvm::Value* result) {
    auto p = affine_of(a), q = affine_of(c);
    if (!p || !q) return;
    if (o == ast::op::add) affine_[result] = {b_.CreateAdd(p->base, q->base), p->stride + q->stride};
    else if (o == ast::op::sub) affine_[result] = {b_.CreateSub(p->base, q->base), p->stride - q->stride};
    else if (o == ast::op::mul) {
      auto* pc = llvm::dyn_cast<llvm::ConstantInt>(p->base);
      auto* qc = llvm::dyn_cast<llvm::ConstantInt>(q->base);
      if (q->stride == 0 && qc) affine_[result] = {b_.CreateMul(p->base, q->base), p->stride * qc->getSExtValue()};
      else if (p->stride == 0 && pc) affine_[result] = {b_.CreateMul(p->base, q->base), q->stride * pc->getSExtValue()};
    }
  }

  llvm::Value* element_ptr(const ast::node& x, llvm::Value* index) {
    llvm::Value* base = buffer(int(x.arg));
    return b_.CreateInBoundsGEP(mem_type(x.dt), base, index);
  }
  llvm::Value* buffer(int slot) {
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
      auto a = affine_of(idx);
      if (ok == nullptr && a && a->stride == 0) return load_scalar(x, a->base, nullptr);
      if (ok == nullptr && a && a->stride == 1) {  // one vector load
        llvm::Type* t = llvm::FixedVectorType::get(mem_type(x.dt), unsigned(vec_width_));
        return to_reg(b_.CreateAlignedLoad(t, element_ptr(x, a->base), llvm::Align(std::size_t(size_bytes(x.dt)))), x.dt);
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
    for (int l = 0; l < lane_count_; ++l) {
      bool repeat = false;  // identical lanes write the same element once
      for (int k = 0; k < l && !repeat; ++k) repeat = index[std::size_t(k)] == index[std::size_t(l)];
      if (!repeat) store_one(x, index[std::size_t(l)], value[std::size_t(l)]);
    }
    return splat(nullptr);
  }
  void store_one(const ast::node& x, llvm::Value* idx, llvm::Value* v) {
    if (!is_vec(idx) && !is_vec(v)) {
      b_.CreateStore(to_mem(v, x.dt), element_ptr(x, idx));
      return;
    }
    auto a = affine_of(idx);
    if (a && a->stride == 1) {
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
    llvm::Value* bound = emit(r.src[0])[0];
    llvm::Type* t = reg_type(x.dt);
    llvm::Value* identity = x.o == ast::op::reduce_sum ? llvm::Constant::getNullValue(t) : lowest(x.dt);
    auto* pre = b_.GetInsertBlock();
    loop l = open_loop(b_.getInt64(0), bound, "r");
    scopes_.emplace_back();
    scopes_.back()[x.src[1]] = splat(l.index);
    const lanes& v = emit(x.src[0]);
    // accumulators: phis in the header, scalar or vector like the values they sum
    lanes acc(static_cast<std::size_t>(lane_count_));
    {
      auto saved = b_.saveIP();
      b_.SetInsertPoint(l.header, l.header->getFirstNonPHIIt());
      for (std::size_t i = 0; i < acc.size(); ++i) {
        llvm::Type* ty = shaped(t, v[i]);
        auto* phi = b_.CreatePHI(ty, 2, "acc");
        phi->addIncoming(is_vec(v[i]) ? b_.CreateVectorSplat(unsigned(vec_width_), identity) : identity, pre);
        acc[i] = phi;
      }
      b_.restoreIP(saved);
    }
    lanes next(acc.size());
    for (std::size_t i = 0; i < acc.size(); ++i) next[i] = accumulate(x.o, x.dt, acc[i], v[i]);
    scopes_.pop_back();
    close_loop(l);
    for (std::size_t i = 0; i < acc.size(); ++i) llvm::cast<llvm::PHINode>(acc[i])->addIncoming(next[i], l.index->getIncomingBlock(1));
    return acc;
  }
  llvm::Value* accumulate(ast::op o, dtype t, llvm::Value* acc, llvm::Value* v) {
    if (o == ast::op::reduce_max) return binary(ast::op::max, t, acc, v);
    if (!is_float(t)) return b_.CreateAdd(acc, v);
    auto* sum = llvm::cast<llvm::Instruction>(b_.CreateFAdd(acc, v));
    // Without a vector range, let the loop vectorizer split each sum into partial sums (a
    // row sum, a matvec, or several scalar lanes sharing one weight). With a vector range
    // the lanes are the vector: keep the reduce loop scalar rather than gather along it.
    if (vec_range_ < 0) {
      llvm::FastMathFlags fmf = sum->getFastMathFlags();
      fmf.setAllowReassoc(true);
      sum->setFastMathFlags(fmf);
    }
    return sum;
  }
  llvm::Value* lowest(dtype t) {
    llvm::Type* ty = reg_type(t);
    if (is_float(t)) return llvm::ConstantFP::getInfinity(ty, true);
    if (t == dtype::bool_ || is_unsigned_int(t)) return llvm::ConstantInt::get(ty, 0);
    return llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(ty->getIntegerBitWidth()));
  }

  llvm::Value* unary(const ast::node& x, llvm::Value* a, dtype from) {
    switch (x.o) {
      case ast::op::neg: return is_float(x.dt) ? b_.CreateFNeg(a) : b_.CreateNeg(a);
      case ast::op::exp2: return intrinsic(llvm::Intrinsic::exp2, a);
      case ast::op::log2: return intrinsic(llvm::Intrinsic::log2, a);
      case ast::op::sqrt: return intrinsic(llvm::Intrinsic::sqrt, a);
      case ast::op::sin: return intrinsic(llvm::Intrinsic::sin, a);
      case ast::op::reciprocal: return b_.CreateFDiv(llvm::ConstantFP::get(a->getType(), 1.0), a);
      case ast::op::cast: return cast(a, from, x.dt);
      case ast::op::bitcast: {
        llvm::Value* bits = to_mem(a, from);
        llvm::Type* to = shaped(mem_type(x.dt), a);
        return to_reg(bits->getType() == to ? bits : b_.CreateBitCast(bits, to), x.dt);
      }
      default: TG_UNREACHABLE("unary op");
    }
  }

  llvm::Value* cast(llvm::Value* a, dtype from, dtype to) {
    llvm::Type* t = shaped(reg_type(to), a);
    if (to == dtype::bool_) return is_float(from) ? b_.CreateFCmpUNE(a, llvm::ConstantFP::get(a->getType(), 0.0))
                                                   : b_.CreateICmpNE(a, llvm::ConstantInt::get(a->getType(), 0));
    if (is_float(from) && is_float(to)) {
      llvm::Value* v = a->getType() == t ? a : (t->getScalarSizeInBits() > a->getType()->getScalarSizeInBits()
                                                    ? b_.CreateFPExt(a, t) : b_.CreateFPTrunc(a, t));
      return round_to(v, to);
    }
    if (is_float(from)) return is_signed_int(to) ? b_.CreateFPToSI(a, t) : b_.CreateFPToUI(a, t);
    if (is_float(to)) return round_to(is_signed_int(from) ? b_.CreateSIToFP(a, t) : b_.CreateUIToFP(a, t), to);
    return b_.CreateIntCast(a, t, is_signed_int(from));
  }

  llvm::Value* binary(ast::op o, dtype t, llvm::Value* a, llvm::Value* c) {
    bool f = is_float(t), s = is_signed_int(t);
    switch (o) {
      case ast::op::add: return f ? b_.CreateFAdd(a, c) : b_.CreateAdd(a, c);
      case ast::op::sub: return f ? b_.CreateFSub(a, c) : b_.CreateSub(a, c);
      case ast::op::mul: return f ? b_.CreateFMul(a, c) : b_.CreateMul(a, c);
      case ast::op::div: return f ? b_.CreateFDiv(a, c) : (s ? b_.CreateSDiv(a, c) : b_.CreateUDiv(a, c));
      case ast::op::idiv: return s ? b_.CreateSDiv(a, c) : b_.CreateUDiv(a, c);
      case ast::op::mod: return s ? b_.CreateSRem(a, c) : b_.CreateURem(a, c);
      case ast::op::max:
        if (f) return intrinsic(llvm::Intrinsic::maximum, a, c);  // NaN in, NaN out
        return b_.CreateSelect(s ? b_.CreateICmpSGT(a, c) : b_.CreateICmpUGT(a, c), a, c);
      case ast::op::min:
        if (f) return intrinsic(llvm::Intrinsic::minimum, a, c);
        return b_.CreateSelect(s ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c), a, c);
      case ast::op::cmplt: return f ? b_.CreateFCmpOLT(a, c) : (s ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c));
      case ast::op::cmpeq: return f ? b_.CreateFCmpOEQ(a, c) : b_.CreateICmpEQ(a, c);
      case ast::op::cmpne: return f ? b_.CreateFCmpUNE(a, c) : b_.CreateICmpNE(a, c);
      case ast::op::bit_and: return b_.CreateAnd(a, c);
      case ast::op::bit_or: return b_.CreateOr(a, c);
      case ast::op::bit_xor: return b_.CreateXor(a, c);
      case ast::op::shl: return b_.CreateShl(a, c);
      case ast::op::shr: return s ? b_.CreateAShr(a, c) : b_.CreateLShr(a, c);
      default: TG_UNREACHABLE("binary op");
    }
  }

  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function* f_;
  std::span<const ast::node> nodes_;
  int n_global_;
  const kernel_opts& opts_;
  int lane_count_ = 1;
  int vec_range_ = -1, vec_width_ = 1;
  std::map<llvm::Value*, affine> affine_;
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
  emitter(module, f, nodes, global_ranges, opts).run();
  return f;
}

}  // namespace tg::codegen
