// gpu_heuristic.hpp: the default opts for a kernel on a GPU (no search, no timing). A GPU's
// threads run in waves of 32 that load together: the schedule should have neighbouring
// threads read neighbouring bytes. One thread per output element does that when the outputs'
// last range walks memory contiguously (an elementwise kernel, a matmul's columns); when it
// does not (a matvec's rows, a norm's or softmax's rows), a group of threads shares each
// element and splits its reduce, so the group reads the row together. A matrix-matrix kernel
// (one loop reduce, a load invariant along each of two output ranges) keeps one thread per
// output or, where there are outputs enough to fill the GPU, one per register tile of up to
// 4 x 4 of them (kernel_opts::upcast), with its reduce unrolled so a trip's loads are in
// flight together.
#pragma once
#include <span>
#include <tg/ast/node.hpp>

#include "runtime/codegen/llvm_kernel.hpp"

namespace tg::opt {

// What the GPU heuristic needs of the target: per-target numbers, not a second heuristic.
struct gpu_traits {
  int wave_lanes = 32;            // threads that issue a load together (RDNA wave32, NVIDIA's warp)
  int busy_threads = 1 << 16;     // threads it takes to keep the whole GPU busy, about
  int max_reduce_unroll = 16;     // the most kernel_opts::reduce_unroll the renderer takes (AMD's: 32)
  // In a split dot over a block loop (the LLM's int8 matmuls), the fewest bytes of each stream a
  // thread should read per block; 0: no such rule. Where a block's lanes step fewer bytes (Q8_0's
  // 16 lanes read 2 weight bytes each), fewer threads share a block, each taking several of its
  // lanes, and the wave's other threads take more blocks at once. NV: 4, from the decode matmuls
  // measured on an H200 (tests/bench/nv_matvec_sweep); AMD: 0 (not measured on a card).
  int min_thread_block_bytes = 0;
  // With such a split, the most trips of the block loop a thread makes (its unroll doubles until
  // they fit); 0: the unroll stays 4. NV: 16, from the same measurements (Q8_0's 4096 x 14336
  // matvec: 19% of the copy bandwidth at 28 trips of 4 blocks, 28% at 14 of 8); AMD: 1, with
  // max_split_unroll 8, from BEAM on AMD:EMU ranking by the modeled cost (the 1B Q4_K_M decode's
  // Q4_K ffn_down: 8 blocks a thread, 40.5 us in 2 trips of 4, 11.9 us in one of 8; Q8_0's k/v
  // matvec 4.0 -> 3.2 us).
  int max_split_trips = 0;
  // The most reduce_unroll that rule takes (its unroll doubles up to this). NV: 32, the
  // renderer's limit; AMD: 8 (uncapped, the 1B Q8_0 decode's 64-block shares took unroll 32 and
  // the modeled token fell from 366 to 225 tok/s).
  int max_split_unroll = 32;
  // Where a split dot's threads are fewer than a quarter of busy_threads (a k/v matvec of 1024
  // rows: most of the GPU idle), each thread instead reads at least this many bytes of a block
  // and walks its share of the row in one trip, so each has as much of the row in flight as it
  // can; 0: no such rule. NV: 16 (an H200's 1024 x 4096 Q8_0 matvec: 13% -> 20-21% of the copy
  // bandwidth; at 4096 rows the same split measured 10-40% slower, hence the quarter); AMD: 16,
  // from the roofline model only (a one-output norm reduce in 8 trips rather than 32).
  int sparse_block_bytes = 0;
  // The most reduce_unroll such an idle-GPU kernel takes to walk its share in one trip. NV: 16,
  // the most measured on an H200; AMD: 32, what BEAM on AMD:EMU picks for the 1B decode's
  // one-output RMS norm reduce (2048 values over 32 work-items: 4.0 -> 3.0 us modeled).
  int sparse_max_unroll = 16;
};

// asked_upcast: the register tile the kernel's author gives (ast::kernel::upcast, for CPUs); on a
// GPU it sizes the tile of a split dot over many outputs (below: the LLM's full-chunk matmuls take
// 4 tokens, Q6_K's 2), and is otherwise not used.
codegen::kernel_opts choose_gpu_opts(std::span<const ast::node> nodes, int global_ranges, const gpu_traits& traits,
                                     std::span<const int> asked_upcast = {});

// Whether kernel_opts::nested_lanes can change the kernel: it has one top-level reduce, whose
// body is directly a reduce of the same kind (the LLM's int8 matmuls). BEAM skips nested moves
// elsewhere (runtime/tune/gpu_candidates.hpp).
bool splits_nested(std::span<const ast::node> nodes);

}  // namespace tg::opt
