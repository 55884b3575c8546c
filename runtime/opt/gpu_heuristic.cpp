// gpu_heuristic.cpp: see gpu_heuristic.hpp.
#include "runtime/opt/gpu_heuristic.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "runtime/opt/access_strides.hpp"

namespace tg::opt {
namespace {

// The reduces that are not inside another reduce's body, the ones the codegen splits across a
// thread group (a lane-hinted one too: on a GPU its lanes become the group's threads), each
// with the iterations of its body's loops per output element (-1 where a bound is symbolic).
struct top_reduce {
  int range;                 // its range number
  std::int64_t bound;        // its range's bound, -1 when symbolic
  std::int64_t iterations;   // bound times the bounds of the reduces below it, -1 when symbolic
  // Where its body is directly a loop reduce of the same kind (a lane-hinted dot whose lanes
  // each walk the row's blocks): that reduce's bound, -1 when symbolic; else 0.
  std::int64_t nested_bound = 0;
  int nested_range = -1;     // that reduce's range number
  bool lanes_hint = false;   // hinted reduce_as_lanes (the LLM's int8 dots)
  bool long_walk = false;    // hinted reduce_long_walk (a full chunk's weighted sum past a long context)
};

std::vector<top_reduce> top_level_reduces(std::span<const ast::node> nodes) {
  // Nodes come in topological order (sources first), so walking backwards visits a reduce
  // before the nodes of its body; `owner` is the top-level reduce whose body a node is in.
  std::vector<int> owner(nodes.size(), -1);
  for (std::size_t i = nodes.size(); i-- > 0;) {
    const ast::node& n = nodes[i];
    for (int s = 0; s < ast::source_count(n.o); ++s) {
      if (n.src[s] == ast::none) continue;
      const int inherited = owner[i] >= 0 ? owner[i] : ast::is_reduce(n.o) && s == 0 ? int(i) : -1;
      if (inherited >= 0) owner[std::size_t(n.src[s])] = inherited;
    }
  }
  std::vector<top_reduce> tops;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const ast::node& n = nodes[i];
    if (!ast::is_reduce(n.o) || owner[i] >= 0) continue;
    const int range = int(nodes[std::size_t(n.src[1])].arg);
    const std::int64_t bound = const_bound(nodes, range);
    std::int64_t iterations = bound;
    for (std::size_t j = 0; j < nodes.size() && iterations >= 0; ++j)
      if (ast::is_reduce(nodes[j].o) && owner[j] == int(i)) {
        const std::int64_t inner = const_bound(nodes, int(nodes[std::size_t(nodes[j].src[1])].arg));
        // Capped: a K-quant chunk matmul's 64 quad reduces of 4 would overflow the product.
        iterations = inner < 0 ? -1 : std::min<std::int64_t>(iterations * inner, std::int64_t(1) << 40);
      }
    std::int64_t nested_bound = 0;
    int nested_range = -1;
    const ast::node& body = nodes[std::size_t(n.src[0])];
    if (body.o == n.o && body.dt == n.dt && body.arg != ast::reduce_as_lanes) {
      nested_range = int(nodes[std::size_t(body.src[1])].arg);
      nested_bound = const_bound(nodes, nested_range);
    }
    tops.push_back({range, bound, iterations, nested_bound, nested_range, n.arg == ast::reduce_as_lanes,
                    n.arg == ast::reduce_long_walk});
  }
  return tops;
}

// Whether an output range's bound is a symbolic expression other than a bare variable: a position
// plus a count, as decode attention's context (start_pos + T), which runs to thousands, where a
// bare variable (a token count) is 1 at decode and the heuristic counts it so.
bool outputs_grow(std::span<const ast::node> nodes, int global_ranges) {
  for (int r = 0; r < global_ranges; ++r) {
    const ast::node* range = range_node(nodes, r);
    if (range == nullptr) continue;
    const ast::node& bound = nodes[std::size_t(range->src[0])];
    if (bound.o != ast::op::constant && bound.o != ast::op::variable) return true;
  }
  return false;
}

// Bytes an access moves as range `number` steps by 1.
std::int64_t byte_stride(std::span<const ast::node> nodes, const ast::node& n, int number) {
  return std::llabs(element_stride(nodes, n, number)) * size_bytes(n.dt);
}

// Neighbouring threads along the last output range touch neighbouring bytes: every access
// moves by at most 16 bytes (a 16-byte vector) and some access moves.
bool outputs_coalesce(std::span<const ast::node> nodes, int global_ranges) {
  if (global_ranges == 0) return false;
  bool moves = false;
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::load && n.o != ast::op::store) continue;
    const std::int64_t s = byte_stride(nodes, n, global_ranges - 1);
    if (s > 16) return false;
    moves = moves || s > 0;
  }
  return moves;
}

// Some load walks memory along the range in small steps, so a wave's lanes on consecutive
// iterations read a few neighbouring lines.
bool streams_along(std::span<const ast::node> nodes, int number) {
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::load) continue;
    const std::int64_t s = byte_stride(nodes, n, number);
    if (s > 0 && s <= 256) return true;
  }
  return false;
}

// Of the loads that walk both the lane range and the block range of a split dot (its weights and
// activations), the fewest bytes one block moves (Q8_0's weights: 34); 0 when none does.
std::int64_t narrowest_block(std::span<const ast::node> nodes, int lane_range, int block_range) {
  std::int64_t narrowest = 0;
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::load || byte_stride(nodes, n, lane_range) == 0) continue;
    const std::int64_t block = byte_stride(nodes, n, block_range);
    if (block > 0 && (narrowest == 0 || block < narrowest)) narrowest = block;
  }
  return narrowest;
}

// The most bytes a load moves as the block range steps by 1 (a Q4_K row's 144-byte super-blocks).
std::int64_t widest_block(std::span<const ast::node> nodes, int block_range) {
  std::int64_t widest = 0;
  for (const ast::node& x : nodes)
    if (x.o == ast::op::load) widest = std::max(widest, byte_stride(nodes, x, block_range));
  return widest;
}
// Blocks this wide are K-quant super-blocks (each 8 sub-blocks of quads): one is already many
// loads in flight for a thread.
constexpr std::int64_t super_block_bytes = 128;

// A matrix-matrix kernel's two tile ranges: output ranges m < n where some load is invariant
// along n and moves along m (a matmul's a, read by row) and another is invariant along m and
// moves along n (b, read by column); the innermost such pair (a batched matmul's last two
// ranges), or {-1, -1}.
std::pair<int, int> matmul_ranges(std::span<const ast::node> nodes, int global_ranges) {
  auto some_load = [&](int moves, int stays) {
    for (const ast::node& n : nodes)
      if (n.o == ast::op::load && element_stride(nodes, n, stays) == 0 && element_stride(nodes, n, moves) != 0) return true;
    return false;
  };
  for (int n = global_ranges - 1; n >= 1; --n)
    for (int m = n - 1; m >= 0; --m)
      if (some_load(m, n) && some_load(n, m)) return {m, n};
  return {-1, -1};
}

// The register tile of a matrix-matrix kernel: each work-item computes tm x tn outputs, so per
// reduce step it loads tm elements of a and tn of b and does tm x tn multiply-adds, where one
// work-item per output loads two per multiply-add. Grown (columns first: b's neighbouring
// elements are one wide load) up to 4 x 4 while the work-items left still fill the GPU
// (traits.busy_threads): the model (tests/bench/gpu_roofline) charges a wave per memory
// latency it waits, so fewer, longer-walking work-items only pay where there are enough of
// them. The reduce is unrolled so a trip has about 64 elements in flight: 32 steps for 1 x 1
// (where the renderer takes 32: traits.max_reduce_unroll), 8 for 4 x 4, within 128 VGPRs (12
// waves per SIMD).
void choose_matmul_tile(std::span<const ast::node> nodes, int global_ranges, const gpu_traits& traits,
                        codegen::kernel_opts& opts) {
  const auto [m, n] = matmul_ranges(nodes, global_ranges);
  if (m < 0) return;
  const std::int64_t bm = const_bound(nodes, m), bn = const_bound(nodes, n);
  if (bm < 0 || bn < 0) return;  // a symbolic tile range: left as it is (a repeated binding specializes it)
  std::int64_t outputs = 1;       // symbolic ranges other than the tile's count as 1
  for (int r = 0; r < global_ranges; ++r) outputs *= std::max<std::int64_t>(1, const_bound(nodes, r));
  int tm = 1, tn = 1;
  auto can_grow = [&](int f, std::int64_t bound) {
    return f * 2 <= 4 && bound >= f * 2 && outputs / (std::int64_t(tm) * tn * 2) >= traits.busy_threads;
  };
  for (;;) {
    if (tn <= tm && can_grow(tn, bn)) tn *= 2;
    else if (can_grow(tm, bm)) tm *= 2;
    else if (can_grow(tn, bn)) tn *= 2;
    else break;
  }
  opts.upcast.assign(std::size_t(global_ranges), 1);
  opts.upcast[std::size_t(m)] = tm;
  opts.upcast[std::size_t(n)] = tn;
  opts.reduce_unroll = 1;
  while (opts.reduce_unroll * 2 * (tm + tn) <= 64 && opts.reduce_unroll * 2 <= traits.max_reduce_unroll) opts.reduce_unroll *= 2;
}

// A matrix-matrix kernel whose reduce has a symbolic length (attention's weighted sum of V: a walk
// over the context, as long as the context grows): a 4 x 4 register tile whatever the output count,
// so each trip's loads of p and V feed 16 multiply-adds rather than one or two (at one output a
// work-item, the walk's index arithmetic, masks and conversions made these kernels bound by issue,
// not memory), and the walk split over half a wave of work-items, or a whole one where the tiles at
// half a wave come to fewer than busy_threads / 2 threads, 2 iterations a trip, 4 where they come
// to 2 x busy_threads or more. On AMD:EMU, modeled on an RX 7900 XTX
// (tests/bench/gpu_attention_sweep: groups of 8 to 32, unrolls of 1 to 4, contexts 64 to 4096),
// this was the best or within 10% of it where each form runs (decode's runs past context 1024), but
// for full chunks at long contexts: the 8B's heads of 128 at 1024 and 4096 (35.0 and 131.0 us
// against 27.8 and 99.5 at a wave, unroll 2), the 1B's of 64 at 4096 (66.5 against 56.6 at a wave,
// unroll 4). The 8B's full chunk (8192 tiles: 2 x busy_threads at half a wave) at unroll 4: 6.2,
// 11.1, 30.5 and 108.2 us at contexts 64, 256, 1024 and 4096, within 10% of the sweep's best at
// each (5.7, 11.0, 27.8, 99.5), where a whole wave (the best past 1024) took 8.2 at 64 and unroll 2
// 35.0 and 131.0 at 1024 and 4096. The 1B's chunk (4096 tiles) gains nothing at unroll 4 (4096:
// 67.0 us) and the runs' lose (the 8B's 2048 tiles: 4.5 -> 18.0 at 1024), so both keep unroll 2;
// unhinted, the 1B's chunk at 4096 stays 17% over the best, which the long walk's hint (below)
// reaches. Against one work-item per output (a 1 x 2 tile at most), the 8B's full chunk at
// context 4096 (at unroll 2): 228.8 -> 131.0 us, 1024 59.0 -> 35.0, 256 16.5 -> 11.0; the 1B's (heads of 64) at
// 4096 281.0 -> 66.5. Decode's weighted sum in runs (attend_runs_kernel) at 4096: the 8B's 11.4 us
// (2048 tiles: half a wave), the 1B's 7.0 (1024 tiles: a wave; 10.0 at half).
// A walk hinted long (ast::reduce_long_walk: the full chunk's kernel past short_attention_context,
// llm/model/transformer.cpp) takes a whole wave, 4 iterations a trip where the tiles at a wave
// come to at most 2 x busy_threads, else 2: with more waves queued the unroll's VGPRs only cut
// how many fit. Same sweep: the 1B's chunk at 1024 and 4096, 17.7 and 56.6 us (the best found;
// unhinted 18.5 and 66.5), the 8B's 27.8 and 99.5 (the best; unhinted 30.5 and 108.2); at
// context 256 the whole wave loses (1B 8.0 against 6.5, 8B 12.1 against 11.1), hence the hint.
// Returns false (opts unchanged) where the kernel is not such a product, or its tile ranges are
// symbolic or not multiples of 4.
bool split_tiled_walk(std::span<const ast::node> nodes, int global_ranges, const gpu_traits& traits, bool long_walk,
                      codegen::kernel_opts& opts) {
  const auto [m, n] = matmul_ranges(nodes, global_ranges);
  if (m < 0) return false;
  const std::int64_t bm = const_bound(nodes, m), bn = const_bound(nodes, n);
  if (bm <= 0 || bn <= 0 || bm % 4 != 0 || bn % 4 != 0) return false;
  std::int64_t tiles = 1;  // symbolic ranges other than the tile's count as 1
  for (int r = 0; r < global_ranges; ++r)
    tiles *= r == m ? bm / 4 : r == n ? bn / 4 : std::max<std::int64_t>(1, const_bound(nodes, r));
  opts.upcast.assign(std::size_t(global_ranges), 1);
  opts.upcast[std::size_t(m)] = 4;
  opts.upcast[std::size_t(n)] = 4;
  if (long_walk) {
    opts.group_lanes = traits.wave_lanes;
    const bool queued = tiles * traits.wave_lanes > 2 * std::int64_t(traits.busy_threads);
    opts.reduce_unroll = std::min(queued ? 2 : 4, traits.max_reduce_unroll);
    return true;
  }
  int group = std::max(1, traits.wave_lanes / 2);
  while (group * 2 <= traits.wave_lanes && tiles * group < traits.busy_threads / 2) group *= 2;
  opts.group_lanes = group;
  // Where the tiles at this group fill the GPU twice over (waves queue for it), 4 iterations a
  // trip: more loads in flight per wave, where more waves would only wait their turn.
  opts.reduce_unroll = tiles * group >= 2 * std::int64_t(traits.busy_threads) ? std::min(4, traits.max_reduce_unroll) : 2;
  return true;
}

// A split dot (the LLM's int8 matmuls: a group of threads per output, splitting the row's block
// loop) that is also a matrix-matrix product with a constant second range (a full prompt chunk's
// tokens: the weights do not move along it) and outputs enough to fill the GPU. Split as for one
// token, each thread would decode its share of a weight row again for every token; instead each
// thread takes a register tile along that range (the kernel's own upcast there, else 4), so a
// decoded weight feeds that many tokens, and the group shrinks until the threads are about four
// times busy_threads (waves to cover each other's memory waits), at most a wave and the row's
// blocks; the group splits the block loop alone (nested lanes: a thread takes whole blocks, whose
// quads' integer dot products it sums before one conversion), with no unroll (a tile's
// accumulators and operands already hold the VGPRs, and fewer waves fit at once). From sweeps of
// the 1B model's chunk matmuls at 32 tokens on AMD:EMU ranked by the modeled cost
// (tests/bench/gpu_prefill_sweep; 24 to 60 schedules each, RX 7900 XTX), where this picks the best
// found: Q8_0 2048 x 2048 24.0 -> 8.4 us, 8192 x 2048 88 -> 26 us, 2048 x 8192 354 -> 26 us,
// 512 x 2048 8 -> 4 us; Q4_K 2048 x 2048 30 -> 13 us, 8192 x 2048 114 -> 35 us; Q6_K 2048 x 8192
// 162 -> 83 us. Returns false (opts unchanged) where the kernel is not such a product.
// `lanes`: the threads the dot's lanes take (1 where its lane bound is 1).
bool tile_split_dot(std::span<const ast::node> nodes, int global_ranges, const top_reduce& dot, int lanes,
                    std::span<const int> asked_upcast, const gpu_traits& traits, codegen::kernel_opts& opts) {
  const auto [m, n] = matmul_ranges(nodes, global_ranges);
  if (m < 0 || dot.nested_bound <= 0) return false;
  const std::int64_t bn = const_bound(nodes, n);
  const bool asked = int(asked_upcast.size()) == global_ranges && asked_upcast[std::size_t(n)] > 1;
  int tile = asked ? asked_upcast[std::size_t(n)] : 4;
  if (bn < tile) return false;
  std::int64_t tiles = 1;
  for (int r = 0; r < global_ranges; ++r)
    tiles *= r == n ? (bn + tile - 1) / tile : std::max<std::int64_t>(1, const_bound(nodes, r));
  int group = lanes;
  while (group * 2 <= traits.wave_lanes && group / lanes * 2 <= dot.nested_bound &&
         tiles * group < 4 * std::int64_t(traits.busy_threads))
    group *= 2;
  // Blocks of 128 bytes or more (K-quant super-blocks, each 8 sub-blocks of quads) in one trip where
  // a wave can: a thread looping over several keeps too much of a block live (Q6_K 2048 x 8192 at
  // 2 tokens a thread: 256 VGPRs and scratch in 2 trips, 170 VGPRs in one; 254 -> 83 us; Q4_K
  // 8192 x 2048: 46 -> 35 us).
  const std::int64_t block_bytes = widest_block(nodes, dot.nested_range);
  if (block_bytes >= super_block_bytes)
    while (group * 2 <= traits.wave_lanes && group / lanes < dot.nested_bound) group *= 2;
  // Super-blocks whose decode asked for a tile of 2 tokens (Q6_K: 4 spill, linear_kernels.cpp)
  // in more trips than one even at a wave (rows of over 8192 values: the 8B's down projection, 56
  // blocks): looped, the tile held 256 VGPRs and spilled. One token a thread with the trips
  // unrolled into one holds 120, no scratch. Modeled (tests/bench/gpu_prefill_sweep q6_k 4096
  // 14336 32; an RX 7900 XTX, then an RX 9070 XT): the looped tile 1106 / 723 us, this 572 / 721;
  // the best found on each, a group of 8 with its 7 trips unrolled (561 / 838) and a looped group
  // of 16 (1087 / 678), lose on the other card. Q4_K and Q5_K (tiles of 4) keep their loop at
  // that shape (167 and 318 us on the RX 7900 XTX; unrolled in groups of 8, 195 and 359).
  int unroll = 1;
  if (block_bytes >= super_block_bytes && asked && tile <= 2 && group / lanes < dot.nested_bound) {
    const std::int64_t trips = (dot.nested_bound + group / lanes - 1) / (group / lanes);
    unroll = int(std::min<std::int64_t>(std::bit_ceil(std::uint64_t(trips)), traits.max_reduce_unroll));
    tile = 1;
  }
  opts.upcast.assign(std::size_t(global_ranges), 1);
  opts.upcast[std::size_t(n)] = tile;
  opts.group_lanes = group;
  opts.nested_lanes = group / lanes;
  opts.reduce_unroll = unroll;
  return true;
}

}  // namespace

codegen::kernel_opts choose_gpu_opts(std::span<const ast::node> nodes, int global_ranges, const gpu_traits& traits,
                                     std::span<const int> asked_upcast) {
  codegen::kernel_opts opts{{}, false};
  int group = 0;  // 0: one thread per element
  // The outputs with each symbolic bound at 1: the LLM's decode, one token (its kernels' token
  // range is a launch variable: an activation rounding over 4096 values in 256-value blocks has
  // 16 outputs a token, each reduce taking 11.9 us in one thread on an H200).
  std::int64_t least_outputs = 1;
  for (int r = 0; r < global_ranges; ++r) least_outputs *= std::max<std::int64_t>(1, const_bound(nodes, r));
  // Too few elements to fill the GPU with one thread each (a norm over a few rows, attention
  // for one token, a total sum): more threads per element, whatever the access pattern. Counted
  // at one token: decode attention's weighted sum of V (8 x 4 x 64 outputs a token, each a
  // reduce over the context) ran one thread per output, and BEAM on AMD:EMU found it 6x
  // slower in the model than a split (18.5 vs 3.0 us at context 16, the 1B model).
  const bool few_outputs = least_outputs * 4 < traits.busy_threads;
  const bool coalesced = outputs_coalesce(nodes, global_ranges);
  // Too few outputs for a wave each to come near filling the GPU: short reduces split below, and
  // split dots read more of each block (traits.sparse_block_bytes).
  const bool idle_gpu = least_outputs * traits.wave_lanes * 4 < traits.busy_threads;
  const bool sparse = traits.sparse_block_bytes > 0 && idle_gpu;
  const int block_bytes = sparse ? traits.sparse_block_bytes : traits.min_thread_block_bytes;
  const std::vector<top_reduce> tops = top_level_reduces(nodes);
  int nested = 1;
  for (const top_reduce& r : tops) {
    // Splitting costs each thread a fixed part (its indices, log2(G) exchanges, the store's
    // guard) that a short reduce does not pay back: at least 16 iterations per lane of a wave.
    // A symbolic bound counts as long.
    const bool long_reduce = r.iterations < 0 || r.iterations >= 16 * traits.wave_lanes;
    // Unless the GPU is left idle (idle_gpu: the activation rounding's block maxima, 128 or 16
    // outputs of 32 or 256 values): then even a short reduce's loads are better spread over a
    // wave than chained in one thread.
    const bool short_but_idle = idle_gpu && r.iterations >= traits.wave_lanes;
    // A dot whose lanes are one thread's (a full chunk's matmul: linear_kernels.hpp) streams along
    // its block loop instead.
    const bool streams = streams_along(nodes, r.range) || (r.nested_bound != 0 && streams_along(nodes, r.nested_range));
    if (!(long_reduce || short_but_idle) || !(few_outputs || (!coalesced && streams))) continue;
    // As many threads as the reduce has iterations, up to a wave: a lane-hinted dot product
    // over 16 lanes (the LLM's int8 matmuls) takes 16, and the nested split below the rest.
    int lanes = traits.wave_lanes;
    while (r.bound > 0 && lanes > 1 && lanes / 2 >= r.bound) lanes /= 2;
    // Threads that would each read only a sliver of a block (traits.min_thread_block_bytes) take
    // several of its lanes instead, and the blocks go to more of the wave.
    if (tops.size() == 1 && r.nested_bound != 0 && block_bytes > 0) {
      const std::int64_t block = narrowest_block(nodes, r.range, r.nested_range);
      while (block > 0 && lanes > 2 && block < std::int64_t(block_bytes) * lanes) lanes /= 2;
    }
    // Fewer than a wave, over a block loop (the int8 matmuls' 8 or 16 lanes): the rest of the
    // wave splits the blocks, so a wave reads neighbouring blocks of one row together and
    // each thread walks fewer of them (kernel_opts::nested_lanes). Only for a kernel's one
    // split reduce (the group is the kernel's).
    if (tops.size() == 1 && r.nested_bound != 0)
      while (lanes * nested < traits.wave_lanes && (r.nested_bound < 0 || nested * 2 <= r.nested_bound)) nested *= 2;
    group = group == 0 ? lanes * nested : std::min(group, lanes);
  }
  if (group <= 1) nested = 1;
  // Short reduces split only because the outputs, counted at one token and context 1, leave the
  // GPU idle, where an output range grows with the context (decode attention's scores: 8 x 4 at
  // context 1, 131072 at 4096): a few work-items an output, so a long context is read at memory
  // speed rather than spending its issue slots on exchanges. On AMD:EMU, modeled on an RX 7900 XTX
  // (the 1B's heads of 64, the 8B's of 128): 4 work-items, unroll 4: context 4096 19.9 -> 6.9 us
  // and 38.3 -> 11.3 us; 1024 (8B) 11.1 -> 4.3; 256 (1B) 3.2 -> 2.5; 16: 2.5 either way. BEAM found
  // 2 work-items with 2 nested lanes, 6.9 us at 4096.
  const bool short_splits = std::none_of(tops.begin(), tops.end(), [&](const top_reduce& r) {
    return r.iterations < 0 || r.iterations >= 16 * traits.wave_lanes;
  });
  if (group > 4 && short_splits && outputs_grow(nodes, global_ranges)) {
    opts.group_lanes = 4, opts.reduce_unroll = 4, opts.nested_lanes = 1;
    return opts;
  }
  // A split dot whose weights many outputs read (a full prompt chunk's matmul): a register tile.
  if (group > 1 && !few_outputs && tops.size() == 1 && tops[0].nested_bound > 0 &&
      tile_split_dot(nodes, global_ranges, tops[0], group / nested, asked_upcast, traits, opts))
    return opts;
  // Four iterations per trip of the split reduce and of innermost loops: four loads in flight
  // per wait, the most a matvec row needs to reach memory speed in the roofline model
  // (tests/bench/gpu_roofline) without spilling.
  if (group > 1) opts.group_lanes = group, opts.reduce_unroll = 4, opts.nested_lanes = nested;
  // Several split reduces in a kernel that asks for a register tile along its last output range
  // (decode attention from the scores alone: the row's max and sum of exponentials, which do not
  // read d, then the weighted sum of V along d): up to 8 neighbouring values of that range a
  // work-item, so the reduces that do not read it run once for 8 outputs. Modeled on an RX 7900 XTX (the 8B's heads,
  // context 512): 14.0 -> 12.0 us; wider tiles spill or wait more.
  const int last = global_ranges - 1;
  if (group > 1 && few_outputs && tops.size() > 1 && int(asked_upcast.size()) == global_ranges &&
      asked_upcast[std::size_t(last)] > 1) {
    opts.upcast.assign(std::size_t(global_ranges), 1);
    opts.upcast[std::size_t(last)] = std::min(asked_upcast[std::size_t(last)], 8);
  }
  // A long block loop (a matvec over K = 14336) in more iterations per trip, so that each thread
  // waits at most traits.max_split_trips times along its row.
  // A sparse kernel's (traits.sparse_block_bytes) in one trip, of at most traits.sparse_max_unroll.
  const int trips = sparse ? 1 : traits.max_split_trips;
  const int most_unroll = std::min(sparse ? traits.sparse_max_unroll : traits.max_split_unroll, traits.max_reduce_unroll);
  if (group > 1 && tops.size() == 1 && tops[0].nested_bound > 0 && trips > 0) {
    const std::int64_t per_thread = (tops[0].nested_bound + nested - 1) / nested;
    while (per_thread > std::int64_t(opts.reduce_unroll) * trips && opts.reduce_unroll * 2 <= most_unroll)
      opts.reduce_unroll *= 2;
    // Super-blocks that do not fit that many trips take no unroll: a loop body of several (unroll
    // 4 or 8 of a longer loop) is where LLVM's AMDGPU scheduler, keeping the VGPRs down, issued the
    // loads one wait at a time (148 waits a wave against 14). A super-block alone already has its
    // 16 or so loads in flight together. On AMD:EMU, modeled on an RX 7900 XTX
    // (tests/bench/gpu_prefill_sweep TYPE ROWS COLS 0), the 8B model's ffn_down (K = 14336: 14
    // super-blocks a thread of 4): Q4_K 150 -> 36.4 us (unroll 8 -> 1, at memory speed); Q6_K 52.2
    // us either way, in 64 VGPRs rather than 256. A loop the unroll covers in its trips (the 1B's
    // ffn_down: 8 a thread, unroll 8) keeps it: 11.9 us, where unroll 4 took 40.
    if (per_thread > std::int64_t(opts.reduce_unroll) * trips &&
        widest_block(nodes, tops[0].nested_range) >= super_block_bytes)
      opts.reduce_unroll = 1;
  }
  // Likewise plain split reduces (a norm's sum of squares over 4096 values: 128 a thread), the
  // longest in at most traits.max_split_trips trips. (A norm's row scale and its block maxima in
  // one kernel took 19 us modeled at unroll 4, 32 trips along the row; 4.5 us so.)
  const bool plain = std::all_of(tops.begin(), tops.end(),
                                 [](const top_reduce& r) { return r.nested_bound == 0 && r.iterations > 0; });
  // A kernel that leaves the GPU idle with plain split reduces of symbolic length (decode
  // attention's row max and sum of exponentials past short_attention_context: 32 rows, each over
  // the context): 16 iterations a trip. BEAM on AMD:EMU, the 1B at context 4096: 18.5 -> 6.5 us
  // modeled each; at context 40, 2.5 us either way. Not where the GPU is busy (the weighted sum
  // of V, 2048 outputs, took 19 -> 70 us so), nor for several reduces in one kernel (decode
  // attention in one kernel for a model with few heads then took 256 VGPRs and spilled).
  const bool symbolic_plain = tops.size() == 1 && tops[0].nested_bound == 0 && !tops[0].lanes_hint &&
                              tops[0].iterations < 0;
  if (group > 1 && symbolic_plain && idle_gpu)
    opts.reduce_unroll = std::min(16, traits.max_reduce_unroll);
  if (group > 1 && !tops.empty() && plain && trips > 0) {
    std::int64_t longest = 0;
    for (const top_reduce& r : tops) longest = std::max(longest, r.bound);
    const std::int64_t per_thread = (longest + group - 1) / group;
    while (per_thread > std::int64_t(opts.reduce_unroll) * trips && opts.reduce_unroll * 2 <= most_unroll)
      opts.reduce_unroll *= 2;
  }
  // One work-item per output and one plain loop reduce over rows and columns: a matmul's tile.
  if (group <= 1 && global_ranges >= 2 && tops.size() == 1 && !tops[0].lanes_hint && tops[0].nested_bound == 0) {
    if (tops[0].bound < 0 && split_tiled_walk(nodes, global_ranges, traits, tops[0].long_walk, opts)) return opts;
    choose_matmul_tile(nodes, global_ranges, traits, opts);
    // Left at one output per work-item with a reduce of symbolic length, where split_tiled_walk
    // does not tile (a full chunk's weighted sum of V for Qwen's 7 query heads a KV head): two
    // work-items share each walk, 16 iterations a trip. BEAM on AMD:EMU, the 1B's chunk of 32
    // tokens at context 32, before the tiled rule: 18.5 -> 4.9 us modeled (one work-item unrolled 32).
    const bool untiled =
        !opts.upcast.empty() && std::all_of(opts.upcast.begin(), opts.upcast.end(), [](int u) { return u == 1; });
    if (untiled && tops[0].bound < 0) {
      opts.group_lanes = 2;
      opts.reduce_unroll = std::min(16, traits.max_reduce_unroll);
    }
  }
  return opts;
}

bool splits_nested(std::span<const ast::node> nodes) {
  const std::vector<top_reduce> tops = top_level_reduces(nodes);
  return tops.size() == 1 && tops[0].nested_bound != 0;
}

}  // namespace tg::opt
