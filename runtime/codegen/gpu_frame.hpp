// gpu_frame.hpp: what the GPU renderers (amdgpu_kernel.hpp, nvptx_kernel.hpp) share around the
// emitter's GPU frame (kernel_frame.hpp): the checks of the GPU opts against a block (workgroup)
// size, the kernel function's signature (buffers as global pointers, then the variables as i64),
// the opts the emitter takes on a GPU, and the launch's block count.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <tg/ast/node.hpp>

#include "runtime/codegen/kernel_frame.hpp"
#include "runtime/codegen/llvm_kernel.hpp"

namespace llvm {
class Function;
class IRBuilderBase;
class Module;
class Value;
}  // namespace llvm

namespace tg::codegen {

// The most iterations per trip of an unrolled reduce the GPU renderers take (gpu_traits::max_reduce_unroll).
inline constexpr int max_gpu_reduce_unroll = 32;

// usage_error naming `target` when the opts cannot run in blocks of `block_size` threads: a
// group of group_lanes threads exchanges within one 32-thread wave / warp, so it is a power of two
// up to 32 in blocks of whole waves; reduce_unroll in [1, 32]; nested_lanes a power of two
// dividing the group; a register tile (upcast) of 1 to 16 values per output range, one per range.
void check_gpu_opts(const char* target, int block_size, int global_ranges, const kernel_opts& opts);

// void @name(ptr addrspace(global_space) noalias %buf0, ..., i64 %var0, ...) for the buffers and
// variables `nodes` use; its buffer count in `frame.buffer_args`. With `buffer_align`, each
// buffer pointer is marked aligned to that many bytes (the backend guarantees it at launch), so
// LLVM widens the loads it can prove aligned (a Q8_0 block's weight pair to one 16-bit load).
llvm::Function* create_gpu_kernel(llvm::Module& module, const std::string& name, std::span<const ast::node> nodes,
                                  unsigned global_space, kernel_frame& frame, int& vars, unsigned buffer_align = 0);

// kernel_frame::thread_index for a 1-D grid of `block_size`-thread blocks: block * block_size +
// thread as i64, from the target's i32 block and thread ids (emitted at `b`'s insertion point).
llvm::Value* flat_thread_index(llvm::IRBuilderBase& b, llvm::Value* block, llvm::Value* thread, int block_size);

// The opts the emitter takes in a GPU frame: the group split, the unroll and the register tile,
// whose lanes stay scalar (no LLVM vectors: each lane is registers of its own, and the targets'
// load-store vectorizers still join a lane row's neighbouring loads into one wide load).
kernel_opts gpu_frame_opts(const kernel_opts& opts);

// A GPU kernel's schedule in words, for -v listings: "32 threads per output", or, with a register
// tile, "a tile of 1x4x4 outputs per thread" (`thread` names the target's term: "thread",
// "work-item").
std::string gpu_schedule_text(int group_lanes, std::span<const int> upcast, const char* thread);

// Threads along the output: the product over the output ranges of ceil(bound at `vars` / the
// range's upcast) (a thread per register tile, the last one overlapping the one before), times
// group_lanes; and the blocks of `block_size` that cover them. 0 for an empty output.
std::uint64_t gpu_blocks(std::span<const ast::node> nodes, int global_ranges, int group_lanes,
                         std::span<const int> upcast, int block_size, std::span<const std::int64_t> vars);

}  // namespace tg::codegen
