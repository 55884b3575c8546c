// kernel_frame.hpp: how a rendered kernel gets its arguments and its output indices, the one
// part of the AST -> LLVM IR emitter (llvm_emitter.hpp) that differs between targets. The CPU's
// frame is the default: void(uint8_t** buffers, const int64_t* vars, begin, end) with a loop per
// output range. A GPU frame (amdgpu_kernel.cpp) gives one thread per output element: the function
// takes the buffers as its first arguments and the variables after them, and the frame says how
// the thread finds its flat index; the emitter bounds-guards it and splits it into the output
// range values (the last range fastest, as the CPU's loops nest; with kernel_opts::upcast a thread
// takes a tile of U neighbouring values of a range, ceil(bound / U) threads along it); with kernel_opts::group_lanes
// G > 1, G consecutive threads share an element (flat index / G) and its top-level reduce, and
// the frame supplies the cross-lane exchange that combines their parts. Only codegen includes it.
#pragma once
#include <functional>
#include <span>
#include <tg/ast/node.hpp>

#include "runtime/codegen/llvm_kernel.hpp"

namespace llvm {
class IRBuilderBase;
class Value;
}

namespace tg::codegen {

struct kernel_frame {
  // Empty: the CPU frame. Otherwise the i64 flat index of the running thread, emitted at the
  // function's entry.
  std::function<llvm::Value*()> thread_index;
  int buffer_args = 0;  // GPU frame: arguments [0, buffer_args) are buffer pointers, the vars follow
  // GPU frame with kernel_opts::group_lanes > 1: the i32 `value` as held by the thread whose
  // lane in the wave is this thread's lane ^ `xor_mask` (mask < group_lanes, so within the
  // group), emitted at `b`'s insertion point. Every thread of the group runs it together.
  std::function<llvm::Value*(llvm::IRBuilderBase& b, llvm::Value* value, int xor_mask)> lane_swap;
  // GPU frame whose target has a 4-byte integer dot product (NVIDIA's dp4a, RDNA's
  // v_dot4_i32_iu8): the i32 sum of the products of the four bytes of the i32 words `a` and `c`
  // (each word's bytes signed or unsigned), emitted at `b`'s insertion point. Empty: none (the
  // emitter then multiplies and adds the four lanes).
  std::function<llvm::Value*(llvm::IRBuilderBase& b, llvm::Value* a, bool a_signed, llvm::Value* c, bool c_signed)> dot4;
  bool gpu() const { return static_cast<bool>(thread_index); }
};

// Fills the body of `f`, whose signature the frame describes.
void emit_kernel_body(llvm::Function* f, std::span<const ast::node> nodes, int global_ranges, const kernel_opts& opts,
                      const kernel_frame& frame);

// The buffer slots and variables a kernel reads or writes: one more than the highest slot
// (load, store, prefetch) and variable index.
struct kernel_arguments {
  int buffers = 0;
  int vars = 0;
};
kernel_arguments arguments_of(std::span<const ast::node> nodes);

}  // namespace tg::codegen
