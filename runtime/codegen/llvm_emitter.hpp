// llvm_emitter.hpp: the AST -> LLVM IR emitter behind llvm_kernel.hpp (private to the codegen).
// Values are emitted on demand from the stores, one per lane (lanes come from upcast ranges); a
// reduce becomes a loop with one accumulator per lane, or, when hinted reduce_as_lanes, one
// vector evaluation and a horizontal sum. The last upcast output range is not unrolled but
// becomes an LLVM vector: values that depend on it are <W x T>, and an index that moves by 1
// along it loads and stores as one vector access (tracked as base + constant offsets per lane).
// Types and elementwise ops: llvm_value_ops.hpp. The output indices come from loops (the CPU) or
// from the thread's index (a GPU): kernel_frame.hpp. The members are defined by theme:
//   llvm_kernel.cpp          run() and the public entry points
//   llvm_emitter_loops.cpp   output loops, panels, a GPU thread's element and register tile
//   llvm_emitter_values.cpp  values: elementwise ops, affine indices, loads and stores
//   llvm_emitter_reduce.cpp  reduces: loops, group splits across lanes, reduces as vector lanes
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "runtime/codegen/kernel_frame.hpp"
#include "runtime/codegen/llvm_kernel.hpp"
#include "runtime/codegen/llvm_value_ops.hpp"

namespace tg::codegen {

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

  void run();

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
  loop open_loop(llvm::Value* start, llvm::Value* end, const char* name, std::int64_t step = 1);
  void close_loop(loop& l);

  // With kernel_opts::panel, a loop over panels of the last output range around the output loops
  // (the range's bound may not depend on an outer range then: it is the same for every row).
  void emit_panels(const std::vector<int>& stores);
  bool depends_on_range(int n) const;

  // The CPU frame: a loop over output range `range` (the outermost over the caller's slice of
  // it, the last over this panel), the next range's inside, the stores innermost.
  void emit_global_loops(int range, const std::vector<int>& stores);

  // The GPU frame: this thread's element (its flat index, or that / G when G threads share
  // each element), if inside the output, split into the range values. The threads of a group
  // have the same element, so they take the bounds check's branch together.
  void emit_thread_element(const std::vector<int>& stores);

  // ceil(bound / u), for a bound known non-negative.
  llvm::Value* upcast_threads(llvm::Value* bound, int u);
  // The U values of range r a GPU thread takes (U = upcast(r)), one per lane: base + digit for
  // base = U x its index along r. Where U does not divide the bound, the last thread's base is
  // pulled back to bound - U, so its tile overlaps the one before (those elements are computed
  // twice, by the same instructions, and stored twice with the same value) and every lane stays
  // in bounds with neighbouring lanes on neighbouring values; where the bound may be below U (a
  // symbolic one, or a constant smaller than U) each lane is also clamped to bound - 1.
  lanes tile_values(llvm::Value* index, llvm::Value* bound, int r);

  static bool is_vec(llvm::Value* v) { return v->getType()->isVectorTy(); }
  static unsigned width_of(llvm::Value* v) { return llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements(); }
  // A value at the current vector width: a scalar is splat; a vector made in an enclosing
  // lane reduce (fewer lanes) repeats each element once per inner lane.
  llvm::Value* widen(llvm::Value* v);
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

  lanes compute(int n);

  // An int64 vector known to be splat(base) + constant offsets (offsets empty: all 0). Loads
  // and stores read the offsets: <0, 1, ...> is one vector access, a repeating <0, 1, .., P-1>
  // one access of P elements broadcast (a lane reduce nested in a vector output range reads
  // its operand that way when the operand does not depend on the vector range).
  struct affine {
    llvm::Value* base;
    std::vector<std::int64_t> offsets;
    std::int64_t at(std::size_t f) const { return offsets.empty() ? 0 : offsets[f]; }
  };
  std::optional<affine> affine_of(llvm::Value* v);
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
  // r > 1 where lane f's offset is f / r (runs of r lanes on one element, consecutive); else 0.
  static std::size_t run_of(const affine& a, std::size_t width) {
    for (std::size_t r = 2; r < width && width % r == 0; r *= 2) {
      bool runs = true;
      for (std::size_t f = 0; f < width && runs; ++f) runs = a.at(f) == std::int64_t(f / r);
      if (runs) return r;
    }
    return 0;
  }
  static std::vector<std::int64_t> steps_signed(int width) {
    std::vector<std::int64_t> steps;
    for (int e = 0; e < width; ++e) steps.push_back(e);
    return steps;
  }
  void track_affine(ast::op o, llvm::Value* a, llvm::Value* c, llvm::Value* result);

  llvm::Value* element_ptr(const ast::node& x, llvm::Value* index);
  llvm::Value* buffer(int slot);

  lanes load(const ast::node& x);
  // A gated load reads element 0 when invalid (always in bounds) and yields 0.
  llvm::Value* load_scalar(const ast::node& x, llvm::Value* index, llvm::Value* valid);
  lanes store(const ast::node& x);
  // llvm.prefetch of the byte's line (read, keep in all cache levels), once per distinct
  // index; a vector index prefetches its first element. The address is formed without
  // inbounds: it may point past the buffer, which a prefetch allows.
  // On a GPU frame a prefetch is a no-op for now (the value passes through).
  lanes prefetch(const ast::node& x);
  void store_one(const ast::node& x, llvm::Value* idx, llvm::Value* v);

  // --- reduces ---
  lanes reduce(const ast::node& x);
  // The reduce that takes the nested lanes under split reduce x: its body, where that is a loop
  // reduce of the same kind (so the parts of both add up in one combine), else none.
  const ast::node* nested_body(const ast::node& x) const;
  // The reduces inside reduce x's body that depend on neither x's range nor the range of a
  // reduce between them and x: each computes the same value on every trip, so x emits them
  // before its loop.
  std::vector<int> invariant_reduces(const ast::node& x) const;
  // Whether n's value reads any of `ranges` (range nodes).
  bool uses_range(int n, const std::vector<int>& ranges) const;
  // Whether the value `n` computes has a reduce loop in it (a reduce the codegen does not
  // evaluate as vector lanes). Memoized: bodies share nodes.
  bool has_loop_below(int n);
  // A butterfly across the group: after log2(G) exchanges every thread holds the whole
  // reduce (the same value in each, so later reduces and the store may use it in any lane).
  llvm::Value* combine_group(const ast::node& x, llvm::Value* part);
  // The value of the thread at lane ^ mask, for any scalar register type: as one or two i32 words.
  llvm::Value* swap_lanes(llvm::Value* v, int mask);
  // The lanes for a sum hinted reduce_as_lanes, or 0 for a loop: the hint is taken when the
  // bound is a small constant, the lanes of the vector output range and of every enclosing
  // such reduce times these stay within 64, and the sum's type is one where a reassociated
  // sum does not round differently in a way that matters (f32, integers). Inside a vector
  // output range of W lanes (integer sums only), lane f stands for output lane f / k (an
  // int8 matmul's rows in vector lanes, each summing pairs: pmaddwd, or vpdpwssd with its
  // accumulator).
  int lane_reduce_width(const ast::node& x, const ast::node& range) const;
  // No loop: the range becomes k vector lanes, computed once; reduces inside get vector
  // accumulators. Nested in another lane reduce of W lanes the vector has W * k lanes, lane
  // f standing for outer lane f / k and this range's value f % k (so 2 * outer + inner is
  // the contiguous <0, 1, ...>); the result has the outer W lanes, each the sum of its k
  // neighbours (for integer products of sign-extended values, x86 makes that pmaddwd).
  lanes reduce_as_lanes(const ast::node& x, int k);
  // Sums each group of k neighbouring lanes of v into one of `outer` lanes. An integer result
  // is frozen (a no-op on values that are not poison): without it LLVM reassociates a sum of
  // two such pair sums (an int8 matmul adding a group's halves) into one chain of four
  // products, and x86 instruction selection then finds one pmaddwd where there were two.
  llvm::Value* horizontal(const ast::node& x, llvm::Value* v, int outer, int k);
  // A quad sum of v = a * c (four i32 lanes) as the GPU frame's 4-byte dot product
  // (kernel_frame::dot4), where each side is four bytes widened or fits a byte in every lane;
  // else null.
  llvm::Value* gpu_dot4(llvm::Value* v);

  // acc (+ or max) v, for the reduce's type.
  llvm::Value* accumulate(ast::op o, dtype t, llvm::Value* acc, llvm::Value* v);

  // --- state ---
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

}  // namespace tg::codegen
