// llvm_kernel.hpp: a kernel AST as an LLVM IR function
//   void name(uint8_t** buffers, const int64_t* vars, int64_t begin, int64_t end)
// that runs iterations [begin, end) of the outermost output loop, so a caller can split
// the work across threads.
#pragma once
#include <span>
#include <string>
#include <vector>
#include <tg/ast/node.hpp>

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace tg::codegen {

// The x86 instructions the codegen may name itself, from the CPU's target description
// (drivers/cpu/cpu_target.hpp); the default names none (generic IR, any target).
struct x86_isa {
  int vector_bits = 0;  // 512 (AVX-512 BW) or 256 (AVX2); 0: not x86
  bool vnni = false;    // AVX-512 VNNI or AVX-VNNI: x86 folds pmaddwd and its sum into vpdpwssd
  // Whether ast::op::prefetch hints become prefetch instructions; false drops them (the CPU's
  // hardware prefetcher follows the stream better on its own: cpu_target::software_prefetch).
  bool prefetch = true;
  bool operator==(const x86_isa&) const = default;
};

// How to shape the loops: upcast[i] > 1 makes output range i step by that factor, with
// the body repeated per lane (a register tile the SLP vectorizer turns into vector code). On a
// GPU frame a thread computes the tile (scalar lanes: vector_lanes must be false there), and
// where the factor does not divide the bound the last tile is pulled back to end at it.
struct kernel_opts {
  std::vector<int> upcast;  // one per output range; empty means none
  // The innermost upcast range becomes an LLVM vector; false keeps every lane scalar, so
  // LLVM vectorizes the reduce loop instead (lanes then share each loaded weight).
  bool vector_lanes = true;
  x86_isa isa{};
  // GPU frames only: this many consecutive threads (a power of two up to the wave, 32) share
  // each output element. The top-level reduce loop is split among them (thread l of the group
  // takes iterations l, l + G, ...) and their partial results are combined across lanes, so
  // the group reads a row's consecutive elements together (a matvec's weight rows, a norm's
  // row) instead of one thread walking the whole row. 1: one thread per element. The CPU
  // frame ignores it.
  int group_lanes = 1;
  // GPU frames: with group_lanes > 1, each thread takes this many iterations of the split
  // reduce per loop trip (G apart), into independent accumulators, so its loads are in flight
  // together rather than one latency each; with group_lanes = 1, this many iterations of each
  // innermost reduce loop per trip, into one accumulator per lane (a matmul's tile). The CPU
  // frame ignores it.
  int reduce_unroll = 1;
  // With group_lanes G > 1: where the split reduce's body is directly another reduce of the
  // same kind (a sum over a block loop inside a lane-hinted dot: the LLM's quantized matmuls),
  // G / nested_lanes threads split the outer reduce and nested_lanes groups of them split the
  // inner one (thread l takes outer iterations l % (G / nested_lanes) + k G / nested_lanes and
  // inner ones l / (G / nested_lanes) + k nested_lanes): a wave reads several neighbouring
  // blocks at once where the outer reduce alone has fewer iterations than G. A reduce whose
  // body is not such a reduce is split G ways as before. A power of two dividing G.
  int nested_lanes = 1;
  // CPU frames: the last output range runs in panels of this many values, and each panel is
  // swept over the thread's whole slice of the outer ranges before the next one starts, so what
  // is read along the last range and the reduce only (a matmul's B columns) comes from cache for
  // every row instead of from memory. A multiple of the last range's upcast; 0: one panel. GPU
  // frames ignore it (threads are the loops there).
  int panel = 0;
  bool operator==(const kernel_opts&) const = default;
};

llvm::Function* emit_kernel(llvm::Module& module, const std::string& name, std::span<const ast::node> nodes,
                            int global_ranges, const kernel_opts& opts);

}  // namespace tg::codegen
