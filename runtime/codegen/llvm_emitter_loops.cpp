// llvm_emitter_loops.cpp: the output loops (CPU), panels of the last range, a GPU thread's element and its register tile (the emitter: llvm_emitter.hpp).
#include "runtime/codegen/llvm_emitter.hpp"

#include <llvm/IR/Intrinsics.h>
#include <algorithm>
#include <bit>
#include <tg/core/error.hpp>

namespace tg::codegen {

emitter::loop emitter::open_loop(llvm::Value* start, llvm::Value* end, const char* name, std::int64_t step) {
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

void emitter::close_loop(loop& l) {
  auto* next = b_.CreateAdd(l.index, b_.getInt64(std::uint64_t(l.step)), "", true, true);
  l.index->addIncoming(next, b_.GetInsertBlock());
  b_.CreateBr(l.header);
  b_.SetInsertPoint(l.exit);
}

void emitter::emit_panels(const std::vector<int>& stores) {
  const int last = n_global_ - 1;
  if (opts_.panel <= 0 || last < 1) {
    emit_global_loops(0, stores);
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
  emit_global_loops(0, stores);
  close_loop(p);
}

bool emitter::depends_on_range(int n) const {
  if (n == ast::none) return false;
  const ast::node& x = nodes_[std::size_t(n)];
  if (x.o == ast::op::range) return true;
  for (int s : x.src)
    if (depends_on_range(s)) return true;
  return false;
}

void emitter::emit_global_loops(int range, const std::vector<int>& stores) {
  if (range == n_global_) {
    for (int store : stores) emit(store);
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
  emit_global_loops(range + 1, stores);
  scopes_.pop_back();
  close_loop(l);
}

void emitter::emit_thread_element(const std::vector<int>& stores) {
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
  for (int store : stores) emit(store);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

llvm::Value* emitter::upcast_threads(llvm::Value* bound, int u) {
  llvm::Value* up = b_.CreateAdd(bound, b_.getInt64(std::uint64_t(u - 1)), "", true, true);
  return b_.CreateUDiv(up, b_.getInt64(std::uint64_t(u)));
}

lanes emitter::tile_values(llvm::Value* index, llvm::Value* bound, int r) {
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

}  // namespace tg::codegen
