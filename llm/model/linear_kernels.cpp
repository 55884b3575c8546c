// linear_kernels.cpp: embedding gather and quantized matmul, dequantizing inside the kernel.
#include "llm/model/linear_kernels.hpp"

#include <algorithm>

#include <tg/core/error.hpp>

#include "llm/model/dequant_kernel.hpp"
#include "llm/model/matmul_tiles.hpp"
#include "drivers/cpu/cpu_target.hpp"

namespace tg::model {

ast::kernel embedding_kernel(const weight& table) {
  kernel_builder kb;
  const std::int64_t gs = group_size(table.type, table.cols);
  auto t = kb.output_range(kb.variable(var_tokens));
  auto i = kb.output_range(table.cols);
  auto row = kb.cast(dtype::int64, kb.load<std::int32_t>(2, t));
  kb.store(0, t * table.cols + i, dequant(kb, 1, table.type, table.row_bytes, row, i / gs, i % gs));
  return kb.finish();
}

namespace {

// The loop shape of a matmul: rows and tokens per step (scalar lanes of a register tile),
// and for types with a lane form, the vector width across a 32-value group.
struct matmul_shape {
  int row_lanes = 1, token_lanes = 1;
  int width = 32;
  int int_lanes = 16;  // integer form: float accumulator lanes, 16 or 8
  bool exact_rows = false;  // each token lane computes exactly as the one-token kernel does
  bool quads = false;       // integer form: each lane takes 4 neighbouring values, not 2 (matmul_form::gpu)
  std::int64_t tokens = 0;  // > 0: the token range's bound, fixed (matmul_prefill_kernel's `tokens`)
  bool own_sums = false;    // integer form, K-quants: the activations' sums from the loaded xq (build_matmul_int8)
  bool unsigned_q = false;  // quads on x86 (vpdpbusd): unsigned weight bytes, zero points in the dot (int_form)
  bool sub_pairs = false;   // K-quant quads over 16 lanes: a sub-block pair per dot (k_int_form_pair)
  bool byte_bits = false;   // unsigned_q Q5_0/Q5_1: fifth bits tested in byte lanes (int_form; AVX2)
};

// Software prefetch of the weight stream: each step of a matmul's group loop asks for the
// cache lines `prefetch_distance` bytes past those it reads now. Without it the dot products'
// compute leaves too few lines in flight: a Q8_0 matvec of 8192 x 2048 on znver3 with 2
// threads reads 29 GB/s, and 38-40 GB/s with lines asked for 2-8 KiB ahead (a plain read of
// the same bytes, no prefetch: 34-41 GB/s). In the 1B Q8_0 model 2 KiB ahead decoded 24.2
// tok/s against 23.0 at 4 KiB. Zen 4 and Zen 5 drop the hints (cpu_target::software_prefetch).
constexpr std::int64_t prefetch_distance = 2048;

// `value` after prefetches for the step `step` of `steps_per_row` over weight row n: one per
// 64-byte line the step reads (a step of a fraction of a line still asks once). Only for
// decode (one token lane) of the integer forms: prefill's tiles compute several tokens per weight
// byte and are bound by that compute, not by the stream (and float rows: build_matmul).
kvalue prefetch_ahead(kernel_builder& kb, const weight& w, const matmul_shape& shape, kvalue n, kvalue step,
                      std::int64_t steps_per_row, kvalue value) {
  if (shape.token_lanes > 1) return value;
  const std::int64_t step_bytes = w.row_bytes / steps_per_row;
  auto at = n * w.row_bytes + step * step_bytes + prefetch_distance;
  for (std::int64_t line = 0; line * 64 < step_bytes; ++line) value = kb.prefetch(1, at + line * 64, value);
  return value;
}

// Output rows n outermost: the CPU backend splits that loop over threads, and at decode
// (one token) the weight rows are the only parallel work there is.
ast::kernel build_matmul(const weight& w, launch_var rows, int first, matmul_epilogue epilogue, matmul_shape shape) {
  kernel_builder kb;
  const std::int64_t K = w.cols, N = w.rows;
  auto n = kb.output_range(N);
  auto t = shape.tokens > 0 ? kb.output_range(shape.tokens) : kb.output_range(kb.variable(rows));
  kb.output_range(1);  // keeps the default opts from tiling rows into vector lanes (gathers across rows)
  auto x_row = first >= 0 ? t + kb.variable(first) : t;
  kvalue acc;
  if (has_lane_dequant(w.type) && K % 32 == 0) {
    // sum over lanes l (one vector) of sum over groups g of W * x: the accumulators are
    // vectors across the whole row, summed horizontally once. A group narrower than the
    // vector is written out as 32 / width terms, so the group's scales load once.
    auto g = kb.reduce_range(K / 32);
    auto l = kb.reduce_range(shape.width);
    kvalue term;
    for (int sub = 0; sub < 32 / shape.width; ++sub) {
      auto j = sub == 0 ? l : l + kb.index(sub * shape.width);
      auto p = dequant_lanes(kb, 1, w.type, w.row_bytes, n, g, j) * kb.load<float>(2, x_row * K + g * 32 + j);
      term = sub == 0 ? p : term + p;
    }
    // Float rows stream without software prefetch: one line a step is what the hardware's
    // prefetcher follows best (matvec_types_bench, Zen 3, 2 threads, 256 MB, five interleaved
    // runs: F16 24.4-28.2 -> 29.3-34.0 GB/s, BF16 20.9-27.1 -> 25.5-31.4 without).
    acc = kb.sum_lanes(kb.sum(term, g), l);
  } else {
    // One lane: LLVM vectorizes the inner reduce over a group instead.
    const std::int64_t gs = group_size(w.type, w.cols);
    auto g = kb.reduce_range(K / gs);
    auto j = kb.reduce_range(gs);
    auto x = kb.load<float>(2, x_row * K + g * gs + j);
    acc = kb.sum(kb.sum(dequant(kb, 1, w.type, w.row_bytes, n, g, j) * x, j), g);
    shape.row_lanes = 1;
  }
  if (epilogue.bias) acc = acc + kb.load<float>(4, n);
  if (epilogue.residual) acc = acc + kb.load<float>(3, t * N + n);
  kb.store(0, t * N + n, acc);
  ast::kernel k = kb.finish();
  if (N % shape.row_lanes != 0) shape.row_lanes = 1;
  if (shape.row_lanes > 1 || shape.token_lanes > 1) {
    k.upcast = {shape.row_lanes, shape.token_lanes, 1};
    k.vector_lanes = false;
  }
  return k;
}

// Quantized weights in integer form (dequant_kernel.hpp: W = a * q - b) times 8-bit
// activations (activation_kernels.hpp: x = s * xq). The dot is written as lanes l
// (shape.int_lanes: 16, or 8 over each half of a 32-value group) times pairs e (2): the
// codegen lays l and e out as neighbouring lanes and sums each pair, which x86 lowers to a
// widening and a pmaddwd per 16 values (the codegen freezes each pair sum, so that adding
// two halves' sums as integers keeps both pmaddwd).
//
// 32-value types (Q8_0, Q4/Q5_0/1; activations rounded per 32 values): per group the
// integer dot sum q * xq, converted and scaled by a * s into float accumulators, less
// b * (s * sum xq).
//
// K-quants (activations rounded per 256 values, so one s per super-block): the 8 sub-blocks
// are written out and their dots times the integer scales a summed as integers; per
// super-block one conversion scaled by d * s, less dmin * s * (sum over sub-blocks of the
// integer min b times the sub-block's integer sum of xq). No sum overflows an int32: at
// most 256 * 127 * 63 * 31 (Q5_K) or 256 * 127 * 128 * 32 (Q6_K).
//
// The sums of xq come from activation_sum_kernel (slot 6), except in a GPU's decode kernel
// (shape.own_sums): there each lane sums the int8 activations it already loaded for its dots,
// so a decode step launches no sum kernel (one dispatch per K-quant matmul input, 3 to 4 a
// layer); the kernel is bound by the weights' bytes, and the extra adds are spare issue slots.
ast::kernel build_matmul_int8(const weight& w, launch_var rows, matmul_epilogue epilogue, matmul_shape shape) {
  kernel_builder kb;
  const std::int64_t K = w.cols, N = w.rows, lanes = shape.int_lanes;
  const std::int64_t per_block = int_form_group(w.type) / 32;  // 32-value groups per weight block
  const std::int64_t scale_block = activation_block_for(w), scales = K / scale_block;
  auto n = kb.output_range(N);
  auto t = shape.tokens > 0 ? kb.output_range(shape.tokens) : kb.output_range(kb.variable(rows));
  kb.output_range(1);
  auto g = kb.reduce_range(K / 32 / per_block);  // weight blocks
  auto l = kb.reduce_range(lanes);
  auto xs = kb.load<float>(5, t * scales + g * (32 * per_block / scale_block));
  kvalue term, offset, isum, osum;
  int_weight iw;
  // shape.sub_pairs: 16 lanes of quads, the first 8 on sub-block 2p and the last 8 on 2p + 1,
  // whose nibbles are the low and high halves of the same 32 bytes (Q6_K: k_int_form_pair): per
  // 64 values one 512-bit vpdpbusd and one multiply by a vector of the lanes' two scales, where
  // a sub-block at a time took two 256-bit ones and two multiplies by a broadcast scale.
  for (std::int64_t pair = 0; shape.sub_pairs && pair < per_block / 2; ++pair) {
    auto e = kb.reduce_range(4);
    auto pw = k_int_form_pair(kb, 1, w.type, w.row_bytes, n, g, pair, l * 4 + e, l * 4);
    auto xq = kb.cast(dtype::int32, kb.load<std::int8_t>(2, t * K + g * (32 * per_block) + pair * 64 + l * 4 + e));
    auto dot = kb.sum_lanes(pw.q * xq, e);
    if (pw.zero.kb != nullptr) dot = dot - kb.sum_lanes(kb.cast(dtype::int32, pw.zero) * xq, e);
    dot = dot * pw.a;
    isum = isum.kb == nullptr ? dot : isum + dot;
    iw.block_a = pw.block_a, iw.block_b = pw.block_b;
  }
  if (shape.sub_pairs && w.type != gguf::tensor_type::q6_k) {
    // The mins times the sub-blocks' sums of xq across the lanes too, sub-block l in lane l < 8
    // (the others 0), where as scalars they took about 40 of the 110 instructions a super-block
    // (llvm-mca, znver5).
    auto sub = l % 8;
    auto b = k_int_min(kb, 1, w.type, w.row_bytes, n, g, sub) * kb.load<std::int32_t>(6, t * (K / 32) + g * per_block + sub);
    osum = kb.where(l < kb.index(8), b, kb.constant(dtype::int32, 0));
  }
  for (std::int64_t sub = 0; !shape.sub_pairs && sub < per_block; ++sub) {
    auto at = g * per_block + kb.index(sub);  // the 32-value group
    std::vector<std::pair<kvalue, kvalue>> dots;  // per half: the integer dot and its scale a
    kvalue lane_sum;  // shape.own_sums: this lane's part of the group's sum of xq
    const std::int64_t per_lane = shape.quads ? 4 : 2;  // neighbouring values a lane multiplies
    for (std::int64_t half = 0; half < 32 / (per_lane * lanes); ++half) {
      auto e = kb.reduce_range(per_lane);
      auto j_pair = l * per_lane + kb.index(half * per_lane * lanes);
      auto j = j_pair + e;
      iw = int_form(kb, 1, w.type, w.row_bytes, n, g, kb.index(sub), j, j_pair, shape.unsigned_q, shape.byte_bits);
      // Quads take the activations as bytes (matmul_form::gpu: stored as int8), so both sides
      // of the dot are four bytes.
      auto x_at = t * K + at * 32 + j;
      auto xq = kb.cast(dtype::int32, shape.quads ? kb.load<std::int8_t>(2, x_at) : kb.load<std::int16_t>(2, x_at));
      // K-quants over several token lanes: q times its integer scale as int16 (at most
      // 31 * 63 or 32 * 128), once for all the lanes, then sign-extended so the pair sums
      // stay pmaddwd. For one token the dot is scaled instead (below): measured faster.
      // Not for quads: the scaled q no longer fits the byte of a 4-byte dot product.
      const bool scale_q = per_block > 1 && shape.token_lanes > 1 && !shape.exact_rows && !shape.quads;
      auto q = scale_q ? kb.cast(dtype::int32, kb.cast(dtype::int16, iw.q) * kb.cast(dtype::int16, iw.a)) : iw.q;
      auto dot = kb.sum_lanes(q * xq, e);
      if (iw.zero.kb != nullptr) dot = dot - kb.sum_lanes(kb.cast(dtype::int32, iw.zero) * xq, e);  // the zero point's own vpdpbusd
      dots.push_back({dot, scale_q ? kvalue{} : iw.a});
      // Only where the sums are used: the builder keeps every node it made, and an unused
      // reduce would still count as one for the GPU heuristic.
      if (shape.own_sums && per_block > 1 && iw.b.kb != nullptr) {
        auto part = kb.sum_lanes(xq, e);
        lane_sum = lane_sum.kb == nullptr ? part : lane_sum + part;
      }
    }
    // Halves under one scale (the same node: the AST is hash-consed; or none, scaled
    // already) are summed first; under two (Q6_K's 16-value sub-blocks) each is scaled on its own.
    const bool one_scale =
        std::all_of(dots.begin(), dots.end(), [&](const auto& d) { return d.second.id == dots[0].second.id; });
    if (dots.size() > 1 && one_scale) {
      kvalue all = dots[0].first;
      for (std::size_t i = 1; i < dots.size(); ++i) all = all + dots[i].first;
      dots = {{all, dots[0].second}};
    }
    for (auto [dot, a] : dots) {
      if (per_block > 1) {
        auto scaled = a.kb != nullptr ? dot * a : dot;
        isum = isum.kb == nullptr ? scaled : isum + scaled;
        continue;
      }
      auto part = kb.cast(dtype::float32, dot) * (a * xs);
      term = term.kb == nullptr ? part : term + part;  // a chain of fused multiply-adds
    }
    if (iw.b.kb != nullptr && per_block > 1) {
      auto b = iw.b * (shape.own_sums ? lane_sum : kb.load<std::int32_t>(6, t * (K / 32) + at));
      osum = osum.kb == nullptr ? b : osum + b;
    } else if (iw.b.kb != nullptr) {
      offset = iw.b * kb.load<float>(6, t * (K / 32) + at);
    }
  }
  if (per_block > 1) {
    term = kb.cast(dtype::float32, isum) * (iw.block_a * xs);
    if (osum.kb != nullptr) offset = kb.cast(dtype::float32, osum) * (iw.block_b * xs);
  }
  // Scalar offsets are shared out over the lanes; offsets per lane (a lane's own sums) are its part already.
  const bool lane_offsets = (shape.own_sums || shape.sub_pairs) && per_block > 1;
  if (offset.kb != nullptr) term = lane_offsets ? term - offset : term - offset * (1.0 / double(lanes));
  auto acc = kb.sum_lanes(kb.sum(prefetch_ahead(kb, w, shape, n, g, K / 32 / per_block, term), g), l);
  if (epilogue.bias) acc = acc + kb.load<float>(4, n);
  if (epilogue.residual) acc = acc + kb.load<float>(3, t * N + n);
  kb.store(0, t * N + n, acc);
  ast::kernel k = kb.finish();
  if (N % shape.row_lanes != 0) shape.row_lanes = 1;
  k.upcast = {shape.row_lanes, shape.token_lanes, 1};
  k.vector_lanes = false;
  return k;
}

ast::kernel pick_matmul(const weight& w, launch_var rows, int first, matmul_epilogue epilogue, matmul_shape shape) {
  if (uses_int8_activations(w)) return build_matmul_int8(w, rows, epilogue, shape);
  return build_matmul(w, rows, first, epilogue, shape);
}

}  // namespace

bool uses_int8_activations(const weight& w) { return has_int_form(w.type) && w.cols % 32 == 0; }
std::int64_t activation_block_for(const weight& w) { return int_form_group(w.type) == 256 ? 256 : 32; }
bool reads_activation_sums(const ast::kernel& k) {
  return std::any_of(k.nodes.begin(), k.nodes.end(),
                     [](const ast::node& n) { return n.o == ast::op::load && n.arg == activation_sums_slot; });
}
bool reads_activation_sums8(const ast::kernel& k) {
  return std::any_of(k.nodes.begin(), k.nodes.end(),
                     [](const ast::node& n) { return n.o == ast::op::load && n.arg == activation_sums8_slot; });
}
bool reads_activation_bytes(const ast::kernel& k) {
  return std::any_of(k.nodes.begin(), k.nodes.end(), [](const ast::node& n) {
    return n.o == ast::op::load && n.arg == activation_values_slot && n.dt == dtype::int8;
  });
}
bool uses_activation_sums(const weight& w) {
  using gguf::tensor_type;
  const tensor_type t = w.type;
  return uses_int8_activations(w) &&
         (t == tensor_type::q4_k || t == tensor_type::q5_k || t == tensor_type::q4_1 || t == tensor_type::q5_1);
}

bool wide_vectors_for(const device& dev) { return dev.name() == "CPU" && cpu::host_cpu_target().vector_bits >= 512; }
matmul_form matmul_form_for(const device& dev) {
  if (dev.name() != "CPU") return matmul_form::gpu;
  return wide_vectors_for(dev) ? matmul_form::wide : matmul_form::narrow;
}

// The int8 decode kernel's accumulator lanes for w on a device of `form` (matmul_kernel's
// choices below; matmul_batch_kernel's rows must take the same).
namespace {
// Whether a CPU decode matmul of w takes quads of its unsigned weight bytes against the
// activations' signed bytes (x86 vpdpbusd, AVX-512 VNNI): the types that decode from their file
// bytes (Q5_0, Q5_1, Q5_K, Q6_K; Q4_0, Q4_1 and Q4_K where they have no nibble tiles). A zero
// point (Q4_0's 8, Q5_0's 16, Q6_K's 32) is subtracted inside the integer dot: a second vpdpbusd
// of the constant against the activations, where a float offset per block (b times the
// activations' sum) cost Q5_0 more scalar work (23.2 -> 26.4 GB/s without) and a sum launch.
// Measured on Zen 4 (EPYC Genoa, 2 threads, matvec_types_bench, GB/s, int16 pairs -> quads):
// - the 32-value types' pairs cost a lane-crossing widening of 32 bytes per block (vpmovsxbw,
//   two 256-bit halves on Zen 4): Q5_0 took 6.9 cycles a block (llvm-mca), bound by the shuffle
//   ports; 5.8 as quads. Q5_1 18.6 -> 25.2, Q5_0 22.0 -> 26.4.
// - the K-quants read half the activation bytes, which matters where a row is wide: with
//   8192 values the int16 activations (16 KiB) no longer stay in L1 beside the weight stream.
//   Q4_K 29-31 -> 37-39 at K = 4096, 24.5 -> 30-34 at 8192; Q5_K 28.6 -> 41-42, 22.5 -> 33.5-34;
//   Q6_K 34.4 -> 40-41, 26-27 -> 32-33.
// - Q5's fifth-bit test, one 32-bit word, reaches the lanes as a mask register (kmovd: the JIT's
//   x86_bit_masks.hpp), not two broadcast halves and a 512-bit vptestnmw: Q5_0 23-26 -> 29-30,
//   Q5_1 19-24 -> 25.5-27. Where their rows are a multiple of 32 they decode from tiles instead
//   (matmul_tiles.hpp: decode_tiles), bound by the memory there.
// With AVX2 and no VNNI (Zen 3) the same quads are pmaddubsw then pmaddwd against ones
// (x86_dot_sums.cpp: x86_quad_sums; exact, as every one of these bytes is below 128), where the
// int16 pairs widened each byte first. Zen 3 (EPYC Milan, 2 vCPUs, 2 threads, matvec_types_bench,
// GB/s, two interleaved runs, int16 pairs -> quads, K-quants over sub-block pairs): Q4_0 11.7-12.3
// -> 16-19, Q4_1 11.1 -> 15.4-15.8, Q4_K 16.8-18.8 -> 20-22, Q5_K 15.5-16.7 -> 19-22, Q6_K 17-18
// -> 18-26; Q5_0 and Q5_1 stayed near 10, bound by their fifth bits' 16-bit test until it
// moved to byte lanes (int_form: byte_bits; 12-13 -> 14-17). Not measured: AVX-512 without VNNI
// (Skylake-X) and AVX-VNNI (256-bit), which keep the pairs.
bool cpu_decode_quads(const weight& w, matmul_form form) {
  using gguf::tensor_type;
  const tensor_type t = w.type;
  const cpu::cpu_target& cpu = cpu::host_cpu_target();
  const bool avx2_quads = form == matmul_form::narrow && !cpu.vnni && cpu.vector_bits == 256;
  return ((form == matmul_form::wide && cpu.vnni) || avx2_quads) &&
         (t == tensor_type::q4_0 || t == tensor_type::q4_1 || t == tensor_type::q5_0 || t == tensor_type::q5_1 ||
          t == tensor_type::q4_k || t == tensor_type::q5_k || t == tensor_type::q6_k);
}
// K-quant quads on the CPU: a sub-block pair per 512-bit dot (matmul_shape::sub_pairs), where
// one sub-block per 256-bit dot left these matvecs bound by instructions, not memory. Zen 5
// (EPYC Turin, 2 threads): instructions per super-block (llvm-mca, znver5) Q4_K 109 -> 86,
// Q6_K 153 -> 81; matvec_types_bench with the weights in cache (MATVEC_HOT=1 MATVEC_MB=1, GB/s)
// Q4_K 38-43 -> 48-57, Q5_K 45 -> 52-53, Q6_K 20-45 -> 26-60; the 1B Q4_K_M decode, interleaved
// with the previous build, 32-41 -> 44-53 tok/s (one run) and 41-50 -> 43-53 (a second).
// With AVX2 the pair is two 256-bit dots; its per-lane scale vector and shared nibble load still
// save instructions over a sub-block at a time (llvm-mca, znver3, cycles per super-block: Q4_K
// 22.5 -> 20.2, Q5_K 26.5 -> 26.2, Q6_K 29.5 -> 24.7).
bool cpu_decode_pairs(const weight& w, matmul_form form) {
  return cpu_decode_quads(w, form) && int_form_group(w.type) == 256 && uses_int8_activations(w);
}
int decode_int_lanes(const weight& w, matmul_form form) {
  if (cpu_decode_pairs(w, form)) return 16;
  const bool eight = form == matmul_form::gpu || (w.type == gguf::tensor_type::q4_k && form == matmul_form::narrow) ||
                     cpu_decode_quads(w, form);
  return eight ? 8 : 16;
}
}  // namespace

// Decode: one row per step, so each thread reads its rows' bytes as one sequential stream
// (two rows at a time measured 25-30% slower: the hardware prefetcher follows one stream
// better). Accumulator lanes (matvec_types_bench, 4096 wide, 2 threads, Zen 5 unless said):
// - Q4_K: 8, a sub-block's halves summed before the integer scale (one multiply per 32
//   values, not two: 1B gate/up 0.38 ms against 0.41 on znver3); with 512-bit vectors 16,
//   which fill one (39-45 -> 47-50 GB/s).
// - Q5_K: 16 (its fifth bits cost more per load than the extra multiply: 39-41 -> 43-49 GB/s).
// - Q6_K, whose halves have scales of their own: 16.
// - Q4_0/Q4_1/Q5_0/Q5_1: 16, taking a block's 16 nibble bytes once, widened to 32 words and
//   shifted per lane (vpsrlvw), where 8 lanes over each half took them twice (Q5_0 29 ->
//   38-41 GB/s, Q4_0 29-32 -> 30-37, Q4_1 26-30 -> 28-29).
// - With AVX-512 VNNI, or AVX2 without VNNI, all of these: 8 lanes of quads, unsigned bytes
//   against the activations' int8 copy (cpu_decode_quads); the K-quants 16 lanes over a
//   sub-block pair (cpu_decode_pairs; on AVX2 two 256-bit dots, one per sub-block).
// - Q8_0 and Q6_K with tiles, and Q4_0/Q4_1/Q4_K/Q5_0/Q5_1 with quad tiles: the tiled kernel
//   (matmul_tiles.hpp: decodes_from_tiles).
// - A GPU (matmul_form::gpu): 8 lanes of quads for every type.
ast::kernel matmul_kernel(const weight& w, launch_var rows, int first, matmul_epilogue epilogue, matmul_form form) {
  if (decodes_from_tiles(w)) return tiled_matmul_kernel(w, epilogue, 1, rows, true);
  const bool cpu_quads = cpu_decode_quads(w, form);
  return pick_matmul(w, rows, first, epilogue,
                     {.row_lanes = 1, .token_lanes = 1, .width = 32, .int_lanes = decode_int_lanes(w, form),
                      .quads = form == matmul_form::gpu || cpu_quads, .own_sums = form == matmul_form::gpu,
                      .unsigned_q = cpu_quads, .sub_pairs = cpu_decode_pairs(w, form),
                      .byte_bits = cpu_quads && form == matmul_form::narrow});
}

// Prefill: each decoded weight vector feeds several token accumulators (scalar lanes).
ast::kernel matmul_prefill_kernel(const weight& w, matmul_epilogue epilogue, matmul_form form, std::int64_t tokens) {
  if (tokens < 0 || tokens % prefill_token_lanes != 0)
    throw usage_error(
        str("matmul_prefill_kernel: ", tokens, " tokens; give 0 (any) or a multiple of ", prefill_token_lanes));
  if (tokens > 0 && form != matmul_form::gpu)
    throw usage_error("matmul_prefill_kernel: a fixed token count is for GPUs (matmul_form::gpu)");
  if (prefills_from_tiles(w)) return tiled_matmul_kernel(w, epilogue);
  // A GPU: the decode kernel's quads, over token lanes (the int8 activations it reads are bytes).
  // For a full chunk (tokens > 0) one lane walks a block's quads, their integer dots summed before
  // one conversion and scale per block and token, where 8 lanes (split across threads for one
  // token) convert each quad's dot on its own: the GPU heuristic gives such a kernel whole blocks
  // per thread and a register tile of tokens (runtime/opt/gpu_heuristic.cpp: tile_split_dot),
  // whose size is the upcast given here: 4 tokens, Q6_K's 2 (its 6-bit quads for 4 tokens spill:
  // tests/bench/gpu_prefill_sweep, 2048 x 2048 at 32 tokens on AMD:EMU, 129.5 us modeled against
  // 22.4 with 2). The 1B's Q8_0 2048 x 2048 chunk matmul: 24.0 -> 8.4 us modeled (RX 7900 XTX).
  if (form == matmul_form::gpu) {
    const bool fixed = tokens > 0;
    const int token_lanes = fixed && w.type == gguf::tensor_type::q6_k ? 2 : prefill_token_lanes;
    return pick_matmul(w, var_tokens, -1, epilogue,
                       {.row_lanes = 1, .token_lanes = token_lanes, .width = 8, .int_lanes = fixed ? 1 : 8, .quads = true,
                        .tokens = tokens});
  }
  // Integer form: 4 token lanes, 8 accumulator lanes with a group's halves summed as
  // integers. Measured on znver3, 2 threads, 1B shapes: Q8_0 gate/up 7.7 ms per 32 tokens
  // (8.1 with 8 token lanes, whose activations, 8 x 4 KiB int16 per row, no longer fit L1;
  // 9.5 with 16 float lanes, which spill; 8.3 with 2 rows x 2 tokens). K-quants: 4.2 cycles
  // per token and 32 values (llvm-mca) with float halves, 10% less with integer halves; 8
  // token lanes spill; 2 rows x 2 tokens take 40% longer.
  // Rows of over 4096 values of a 32-value type (Q8_0's down projection): 4 tokens' int16
  // activations (64 KiB at K = 8192) miss L1 whatever the tile, so 2 rows x 2 tokens, which
  // reads each activation once for two rows (1B Q8_0 down: 8.4 ms per 32 tokens, not 9.0).
  const bool wide_32 = w.cols > 4096 && uses_int8_activations(w) && int_form_group(w.type) == 32;
  return pick_matmul(w, var_tokens, -1, epilogue,
                     {.row_lanes = wide_32 ? 2 : 1, .token_lanes = wide_32 ? 2 : prefill_token_lanes, .width = 8,
                      .int_lanes = 8});
}

// A decode batch: token lanes sharing each decoded weight vector, each lane the one-token
// kernel's arithmetic (its width, lanes and scaling), so every row is bit-identical to it.
ast::kernel matmul_batch_kernel(const weight& w, matmul_epilogue epilogue, launch_var rows, matmul_form form) {
  if (decodes_from_tiles(w)) return tiled_matmul_kernel(w, epilogue, prefill_token_lanes, rows, true);
  const bool cpu_quads = cpu_decode_quads(w, form);
  return pick_matmul(w, rows, -1, epilogue,  // matmul_kernel's lanes: the rows must match it
                     {.row_lanes = 1, .token_lanes = prefill_token_lanes, .width = 32, .int_lanes = decode_int_lanes(w, form),
                      .exact_rows = true, .quads = form == matmul_form::gpu || cpu_quads,
                      .own_sums = form == matmul_form::gpu, .unsigned_q = cpu_quads,
                      .sub_pairs = cpu_decode_pairs(w, form), .byte_bits = cpu_quads && form == matmul_form::narrow});
}

}  // namespace tg::model
