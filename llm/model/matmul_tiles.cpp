// matmul_tiles.cpp: the row-tiled weight layout (matmul_tiles.hpp) and its prefill matmul.
#include "llm/model/matmul_tiles.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>
#include <tg/core/error.hpp>

#include "drivers/cpu/cpu_target.hpp"
#include "llm/model/super_block_tiles.hpp"

namespace tg::model {
namespace {

using gguf::tensor_type;

// Bytes ahead of the sub-block a one-token tiled matmul reads that it asks the cache for
// (linear_kernels.cpp's prefetch_distance, for the same reason; Zen 4 and Zen 5 drop the hints:
// cpu_target::software_prefetch).
constexpr std::int64_t tile_prefetch_distance = 2048;

// Values per sub-block (one float scale per row), and whether the layout has offsets b and
// int16 quants (Q6_K: q times its int8 scale, premultiplied) rather than int8.
struct tile_format {
  std::int64_t rows = 32, sub = 32;
  bool offsets = false, wide = false;
  bool half_scales = false;  // a as fp16 (Q8_0: the file's d itself), so the tiles take the file's bytes
  // Quads of unsigned bytes q + zero (vpdpbusd takes unsigned times signed bytes): zero is
  // 128 for Q8_0 and 8 for Q4_0 (offsets 128 a / 8 a, computed by the kernel), 16 for Q5_0
  // (its unsigned values, with offsets 16 a stored), 0 for the types whose q is unsigned.
  bool quads = false;
  std::int64_t zero = 0;
  // Q4_0 and Q4_1 as quads keep the file's nibble bytes: row r's bytes 4p..4p+3 (values 4p..
  // in the low nibbles, 16 + 4p.. in the high ones) at p * 4R + 4r, so with fp16 d (and -m)
  // the tile takes the file's 18 (20) bytes per 32 values and decode reads it.
  bool nibbles = false;
  // Q5_0 and Q5_1 as nibble quads: after the nibbles, their fifth bits, one per value, a byte per
  // row for each 4 nibble bytes: bit e of byte cR + r the fifth bit of row r's value 4c + e (in
  // byte 4c + e's low nibble), bit 4 + e that of value 16 + 4c + e (its high nibble). So Q5 tiles
  // take the file's 22 (24) bytes per 32 values too, and the kernel reads a step's bits for 32
  // rows as one vector, each byte over its row's 4 lanes.
  bool fifth_bits = false;
  // Q4_K as quads, and Q5_K's and Q6_K's decode tiles: their super-blocks whole (sub = 256), in
  // the layouts of super_block_tiles.hpp.
  super_block_layout whole = super_block_layout::none;
  std::int64_t header_bytes() const {  // not for the whole super-blocks (sub_bytes)
    return (half_scales ? (offsets ? 4 : 2) : offsets ? 8 : 4) * rows;
  }
  std::int64_t quant_bytes() const { return wide ? 2 : 1; }
  std::int64_t group() const { return quads ? 4 : 2; }  // values of a row side by side
  std::int64_t nibble_bytes() const { return sub * rows / 2; }
  std::int64_t sub_bytes() const {
    if (whole != super_block_layout::none) return super_block_bytes(whole, rows);
    return header_bytes() + (nibbles ? nibble_bytes() + (fifth_bits ? sub * rows / 8 : 0) : sub * rows * quant_bytes());
  }
};

// Types with a minimum (W = d q + m) carry offsets. As pairs every quant is widened to int8:
// unpacking nibbles or fifth bits per use costs the inner loop more than the bytes save (Q4_K
// nibbles: a shift and a mask per pair beside the 8 vpdpwssd). As quads the Q4 types keep their
// nibbles: a shift and a mask per 32 bytes feed 4 tokens' quad dots (super_block_tiles.cpp's k_nibble_term for Q4_K).
// Q6_K's 16-value scales are folded into int16 quants ((q - 32) * sc, |.| <= 4096; a 256-value dot stays under 2^27), so one float
// step covers 256 values: with int8 quants its 8-pair inner loop was unrolled, and LLVM split
// each vpdpwssd into vpmaddwd + vpaddd (its fast-dpwssd tuning is off for these CPUs),
// twice the vector work. Measured on Qwen2.5-0.5B's ffn_down (896 x 4864, 32 tokens, 2
// threads, Xeon rocketlake-class): Q8_0 1.8 ms; Q4_K 3.1 ms as nibbles, 2.0 as int8; Q6_K
// 3.1 ms as int8 in 16-value sub-blocks, 2.0 as int16 in 256.
// With `decode`, the layout decode reads (decode_tiles where the type has its own: has_decode_layout).
tile_format format_of(tensor_type type, std::int64_t rows, bool quads, bool decode = false) {
  if (type == tensor_type::q6_k && decode) return {.rows = rows, .sub = 256, .quads = true, .whole = super_block_layout::six_bits};
  if (type == tensor_type::q6_k) return {rows, 256, false, true};  // int16: always pairs
  const std::int64_t zero = !quads ? 0 : type == tensor_type::q8_0 ? 128 : type == tensor_type::q4_0 ? 8 : type == tensor_type::q5_0 ? 16 : 0;
  if (type == tensor_type::q8_0) return {rows, 32, false, false, true, quads, zero};
  if (type == tensor_type::q4_k && quads)
    return {.rows = rows, .sub = 256, .offsets = true, .half_scales = true, .quads = true, .whole = super_block_layout::k_nibbles};
  if (type == tensor_type::q5_k && quads && decode)
    return {.rows = rows, .sub = 256, .offsets = true, .half_scales = true, .quads = true, .whole = super_block_layout::five_planes};
  const bool five = type == tensor_type::q5_0 || type == tensor_type::q5_1;
  if ((type == tensor_type::q4_0 || (type == tensor_type::q5_0 && decode)) && quads)
    return {rows, 32, false, false, true, true, zero, true, five};
  if ((type == tensor_type::q4_1 || (type == tensor_type::q5_1 && decode)) && quads)
    return {rows, 32, true, false, true, true, 0, true, five};  // fp16 d and -m
  const bool offsets = type == tensor_type::q4_1 || type == tensor_type::q5_1 || type == tensor_type::q4_k ||
                       type == tensor_type::q5_k || zero > 0;
  return {rows, 32, offsets, false, false, quads, zero};
}

float half_at(const std::uint8_t* p) {
  half h;
  std::memcpy(&h.bits, p, 2);
  return float(h);
}

// Header field `r` (a scale, or R + r: an offset) as the format stores it: fp16 where the
// file's d (and m) are fp16 themselves (Q8_0, and Q4_0 / Q4_1 as nibble quads), so nothing is lost.
void put_header(const tile_format& f, std::uint8_t* header, std::int64_t r, float v) {
  if (!f.half_scales) return std::memcpy(header + 4 * r, &v, 4), void();
  const half h(v);
  std::memcpy(header + 2 * r, &h.bits, 2);
}

// One file block as integers: q (the block's values), and per sub-block (format_of's) a and
// b with W = a * q - b, following ggml-quants.c's dequantize_row_* (and
// gguf/dequant_reference.cpp).
void decode_block(tensor_type type, const std::uint8_t* blk, std::int16_t* q, float* a, float* b) {
  if (type == tensor_type::q8_0) {
    a[0] = half_at(blk);
    for (int j = 0; j < 32; ++j) q[j] = std::int8_t(blk[2 + j]);
    return;
  }
  if (type == tensor_type::q4_0 || type == tensor_type::q4_1 || type == tensor_type::q5_0 || type == tensor_type::q5_1) {
    // d (and m), for Q5 a 32-bit mask of fifth bits (bit j for value j), then 16 bytes:
    // value j in the low nibble of byte j % 16 for j < 16, the high nibble for j >= 16.
    const bool five = type == tensor_type::q5_0 || type == tensor_type::q5_1;
    const bool min = type == tensor_type::q4_1 || type == tensor_type::q5_1;
    const std::uint8_t* qs = blk + (min ? 4 : 2) + (five ? 4 : 0);
    std::uint32_t qh = 0;
    if (five) std::memcpy(&qh, blk + (min ? 4 : 2), 4);
    a[0] = half_at(blk);
    b[0] = min ? -half_at(blk + 2) : 0.0f;  // W = d q + m = a q - b
    const int offset = min ? 0 : five ? 16 : 8;
    for (int j = 0; j < 32; ++j) {
      const int nibble = j < 16 ? qs[j] & 15 : qs[j - 16] >> 4;
      q[j] = std::int16_t((nibble | int((qh >> j) & 1) << 4) - offset);
    }
    return;
  }
  if (type == tensor_type::q4_k || type == tensor_type::q5_k) {
    // Q5_K: qh (32 bytes) at 16, bit j of qh[l] the fifth bit of value 32 j + l; qs at 48.
    const bool five = type == tensor_type::q5_k;
    const float d = half_at(blk), dmin = half_at(blk + 2);
    for (int j = 0; j < 8; ++j) {
      const auto [sc, mn] = k_scale_min(blk + 4, j);
      a[j] = d * float(sc);
      b[j] = dmin * float(mn);
      for (int l = 0; l < 32; ++l) {
        const std::uint8_t byte = blk[(five ? 48 : 16) + 32 * (j / 2) + l];
        const int fifth = five ? (blk[16 + l] >> j & 1) << 4 : 0;
        q[32 * j + l] = std::int16_t((j % 2 == 0 ? byte & 15 : byte >> 4) | fifth);
      }
    }
    return;
  }
  // Q6_K: value v has scale v / 16, folded into q.
  a[0] = half_at(blk + 208);
  std::uint8_t v[256];
  q6_k_values(blk, v);
  for (int at = 0; at < 256; ++at) q[at] = std::int16_t((v[at] - 32) * int(std::int8_t(blk[192 + at / 16])));
}

}  // namespace

std::int64_t tile_rows_for(const device& dev) {
  if (dev.name() != "CPU") return 0;
  return cpu::host_cpu_target().vector_registers >= 32 ? 32 : 8;
}

bool tile_quads_for(const device& dev, tensor_type type) {
  if (dev.name() != "CPU" || type == tensor_type::q6_k) return false;
  const cpu::cpu_target& t = cpu::host_cpu_target();
  if (t.vnni) return t.vector_bits == 512;
  // Without VNNI a quad is vpmaddubsw + vpmaddwd (x86_dot_sums.cpp), 32 products in 3 vector
  // operations per token where int16 pairs take 16 in 3; the unsigned bytes must stay below
  // 128 so that vpmaddubsw's pair sums cannot saturate, which rules out Q8_0's q + 128.
  return type != tensor_type::q8_0;
}

bool has_tiles(const weight& w) {
  const tensor_type t = w.type;
  const bool type_ok = t == tensor_type::q8_0 || t == tensor_type::q4_0 || t == tensor_type::q4_1 || t == tensor_type::q5_0 ||
                       t == tensor_type::q5_1 || t == tensor_type::q4_k || t == tensor_type::q5_k || t == tensor_type::q6_k;
  return type_ok && w.rows % 32 == 0 && uses_int8_activations(w);
}

namespace {

// Writes tile `tile` of w (file bytes `file`) into `out` (the layout of matmul_tiles.hpp):
// per file block, its rows decoded first, then the tile's bytes written in order.
void repack_tile(const weight& w, const tile_format& f, const std::uint8_t* file, std::int64_t tile, std::uint8_t* out) {
  const auto& traits = gguf::traits_of(w.type);
  if (f.whole != super_block_layout::none) return repack_super_blocks(f.whole, w, f.rows, file, tile, out);
  const std::int64_t block = traits.block_elems, subs = w.cols / f.sub, per_block = block / f.sub, R = f.rows;
  std::vector<std::int16_t> q(std::size_t(R * block));
  std::vector<float> a(std::size_t(R * 8)), b(a.size());
  for (std::int64_t blk = 0; blk < w.cols / block; ++blk) {
    for (std::int64_t r = 0; r < R; ++r)
      decode_block(w.type, file + (tile * R + r) * w.row_bytes + blk * traits.block_bytes, &q[std::size_t(r * block)],
                   &a[std::size_t(r * 8)], &b[std::size_t(r * 8)]);
    for (std::int64_t s = 0; s < per_block; ++s) {
      std::uint8_t* at = out + (tile * subs + blk * per_block + s) * f.sub_bytes();
      for (std::int64_t r = 0; r < R; ++r) {
        const float ar = a[std::size_t(r * 8 + s)];
        put_header(f, at, r, ar);
        // Q5_0 as quads keeps its unsigned values: W = a (n - zero) = a n - zero a.
        const float br = f.zero > 0 && f.offsets ? float(f.zero) * ar : b[std::size_t(r * 8 + s)];
        if (f.offsets) put_header(f, at, R + r, br);
      }
      std::uint8_t* quants = at + f.header_bytes();
      if (f.nibbles) {  // the file's bytes, 4 per row per step (matmul_tiles.hpp's layout)
        std::uint8_t* fifth = quants + f.nibble_bytes();  // Q5 only (for Q4 the next sub-block's start)
        if (f.fifth_bits) std::memset(fifth, 0, std::size_t(f.sub * R / 8));
        for (std::int64_t p = 0; p < 4; ++p)
          for (std::int64_t r = 0; r < R; ++r)
            for (std::int64_t e = 0; e < 4; ++e) {
              const auto low = std::uint8_t(q[std::size_t(r * block + 4 * p + e)] + f.zero);
              const auto high = std::uint8_t(q[std::size_t(r * block + 16 + 4 * p + e)] + f.zero);
              quants[(p * R + r) * 4 + e] = std::uint8_t((low & 15) | (high & 15) << 4);
              if (f.fifth_bits) fifth[p * R + r] |= std::uint8_t((low >> 4) << e | (high >> 4) << (4 + e));
            }
        continue;
      }
      std::int16_t* wide = reinterpret_cast<std::int16_t*>(quants);  // 2-byte aligned: every field size is even
      std::int64_t pos = 0;
      const std::int64_t n = f.group();
      for (std::int64_t j = 0; j < f.sub; j += n)  // group j / n of every row, in order
        for (std::int64_t r = 0; r < R; ++r)
          for (std::int64_t e = 0; e < n; ++e, ++pos) {
            const std::int16_t v = q[std::size_t(r * block + s * f.sub + j + e)];
            if (f.wide) wide[pos] = v;
            else quants[pos] = std::uint8_t(v + f.zero);
          }
    }
  }
}

// The integer dot of a sub-block of Q5's decode tiles. Per step c of 4 nibble bytes, the low
// nibbles (values 4c + e) and the high ones (16 + 4c + e) are two quad sums, each with its fifth
// bits (bit e, or 4 + e, of row r's bits byte for the step), so every shift and every tested bit
// is a constant. Written as Q4_0's loop of 8 steps, the step picking nibble and bit by shifts of a
// variable count, LLVM kept the loop and its shifts: 3 times Q4_0's instructions, and 37.7 GB/s
// against 68-70 from L2 (matvec_types_bench, MATVEC_HOT=1 MATVEC_MB=1, Zen 4, 2 threads).
kvalue fifth_bit_dot(kernel_builder& kb, int slot, const tile_format& f, std::int64_t tile_rows, kvalue quants, kvalue x_row,
                     kvalue r) {
  auto c = kb.reduce_range(4);
  kvalue dot;
  for (int high = 0; high < 2; ++high) {
    auto e = kb.reduce_range(4);
    auto byte = kb.load<std::uint8_t>(slot, quants + c * (4 * tile_rows) + r * 4 + e);
    auto nib = high ? byte >> kb.constant(dtype::uint8, 4) : byte & 15;
    auto bits = kb.load<std::uint8_t>(slot, quants + f.nibble_bytes() + c * tile_rows + r);
    auto bit = kb.constant(dtype::uint8, 1) << kb.cast(dtype::uint8, e + kb.index(4 * high));
    auto set = kb.binary(ast::op::cmpne, bits & bit, kb.constant(dtype::uint8, 0));
    auto q = nib | kb.where(set, kb.constant(dtype::uint8, 16), kb.constant(dtype::uint8, 0));
    auto xq = kb.load<std::int8_t>(2, x_row + kb.index(16 * high) + c * 4 + e);
    auto part = kb.sum_lanes(kb.cast(dtype::int32, q) * kb.cast(dtype::int32, xq), e);
    dot = high ? dot + part : part;
  }
  return kb.sum(dot, c);
}

// The bits of w's unsigned quad bytes (q + zero): 5 for the Q5 types, 4 for Q4_1 and Q4_K, 8 for Q8_0.
int quad_bits(tensor_type type) {
  if (type == tensor_type::q5_0 || type == tensor_type::q5_1 || type == tensor_type::q5_k) return 5;
  return type == tensor_type::q8_0 ? 8 : 4;
}

// Whether w's type has a decode layout of its own (decode_tiles): Q6_K, and as quads Q5_0, Q5_1 and Q5_K.
bool has_decode_layout(tensor_type type, bool quads) {
  return type == tensor_type::q6_k || (quads && (type == tensor_type::q5_0 || type == tensor_type::q5_1 || type == tensor_type::q5_k));
}

std::size_t layout_bytes(const weight& w, const tile_format& f) { return std::size_t(w.rows / f.rows * (w.cols / f.sub) * f.sub_bytes()); }

// All of w's tiles in layout f, on every core, written in place where the device's memory is the
// host's (the CPU: tiles are a CPU layout): the 0.5B Q4_K_M repacks 456 MB.
buffer repack(device& dev, const weight& w, const tile_format& f) {
  const std::size_t bytes = layout_bytes(w, f);
  buffer tiles = dev.allocate(bytes);
  std::vector<std::uint8_t> staging;
  auto* out = static_cast<std::uint8_t*>(tiles.data());
  if (out == nullptr) staging.resize(bytes), out = staging.data();
  const auto* file = static_cast<const std::uint8_t*>(w.data.data());
  const std::int64_t count = w.rows / f.rows, workers = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, count);
  std::vector<std::thread> threads;
  for (std::int64_t i = 0; i < workers; ++i)
    threads.emplace_back([&, i] {
      for (std::int64_t tile = i * count / workers; tile < (i + 1) * count / workers; ++tile) repack_tile(w, f, file, tile, out);
    });
  for (auto& t : threads) t.join();
  if (!staging.empty()) tiles.copy_in(staging.data(), bytes);
  return tiles;
}

// Whether w has tiles of `rows` rows (8, 16 or 32: tile_rows_for's choices).
bool tiles_of(const weight& w, std::int64_t rows) { return has_tiles(w) && (rows == 8 || rows == 16 || rows == 32); }

}  // namespace

std::size_t tile_bytes(const weight& w, std::int64_t rows, bool quads, bool decode_only) {
  if (!tiles_of(w, rows)) return 0;
  const bool own = has_decode_layout(w.type, quads);
  const std::size_t decode = own ? layout_bytes(w, format_of(w.type, rows, quads, true)) : 0;
  if (decode_only) return own ? decode : layout_bytes(w, format_of(w.type, rows, quads));
  return layout_bytes(w, format_of(w.type, rows, quads)) + decode;
}

void add_tiles(device& dev, weight& w, std::int64_t rows, bool quads, bool decode_only) {
  if (tile_bytes(w, rows, quads) == 0) throw usage_error(str("add_tiles: weight ", w.name, " has no tiled form of ", rows, " rows"));
  const tile_format f = format_of(w.type, rows, quads);
  const bool own = has_decode_layout(w.type, quads);
  if (!(decode_only && own)) w.tiles = repack(dev, w, f);
  if (own) w.decode_tiles = repack(dev, w, format_of(w.type, rows, quads, true));
  w.tile_rows = rows;
  w.tile_quads = f.quads;
}

// Output ranges: tiles (split over threads), tokens (scalar lanes), the tile's rows (a
// vector). Per sub-block g the integer dot over pairs p (a lane reduce of 2 inside the row
// vector: x86 pmaddwd, folded with the sum into vpdpwssd where VNNI is on), then one float
// step for the tile: dot * (a * s) - b * (s * sum x), s the activation scale. 32 rows per
// tile on AVX-512 measured faster than 16 (Q8_0 8192 x 2048, 32 tokens, one thread: 9 ms
// against 15): two vectors per token give eight independent vpdpwssd chains, not four.
bool tiles_fit_file_bytes(const weight& w, std::int64_t rows, bool quads) {
  if (!tiles_of(w, rows)) return false;
  const tile_format f = format_of(w.type, rows, quads, true);
  // A 32nd over the file's bytes: Q4_K's unpacked scales (148 bytes per 256 values, not 144).
  return layout_bytes(w, f) * 32 <= std::size_t(w.rows * w.row_bytes) * 33;
}
bool decodes_from_tiles(const weight& w) { return w.tile_rows > 0 && tiles_fit_file_bytes(w, w.tile_rows, w.tile_quads); }
bool prefills_from_tiles(const weight& w) { return w.tile_rows > 0 && w.tiles.size_bytes() > 0; }
bool reads_activation_bytes(const weight& w) { return w.tile_rows > 0 && w.tile_quads; }
bool tiles_take_sums(const weight& w) {
  if (w.tile_rows == 0) return false;
  const tile_format f = format_of(w.type, w.tile_rows, w.tile_quads);
  return f.offsets || f.zero > 0;
}

ast::kernel tiled_matmul_kernel(const weight& w, matmul_epilogue epilogue, int token_lanes, launch_var rows, bool decode) {
  if (w.tile_rows == 0) throw usage_error(str("tiled_matmul_kernel: weight ", w.name, " has no tiles (add_tiles)"));
  if (!decode && !prefills_from_tiles(w))
    throw usage_error(str("tiled_matmul_kernel: weight ", w.name, " has decode's tiles only (add_tiles' decode_only)"));
  const tile_format f = format_of(w.type, w.tile_rows, w.tile_quads, decode);
  const int slot = decode && has_decode_layout(w.type, w.tile_quads) ? decode_tiles_slot : tiles_slot;
  const std::int64_t tile_rows = w.tile_rows;
  const std::int64_t K = w.cols, N = w.rows, subs = K / f.sub, act_block = activation_block_for(w);
  // Several tokens on tiles of one vector of rows (AVX2's 8) in the pairs form take two tiles a
  // step, so each activation broadcast feeds two vpmaddwd (register tile 2 x 4 x 8, 8 accumulators
  // of 16 registers). A tile of 16 rows did the same for prefill, but decode read 16-row tiles
  // slower. Zen 3, 2 threads, prefill matmul time (llm -v, 256 tokens, three interleaved runs):
  // Qwen2.5-0.5B-shaped Q8_0 1124-1605 -> 834-1360 ms; the 1B Q4_K_M file's Q6_K weights
  // 15-20% less; Q4_K as quads nothing (its loop spills already), so quads keep one tile a step.
  const std::int64_t tiles_a_step = token_lanes > 1 && !f.quads && tile_rows == 8 && (N / tile_rows) % 2 == 0 ? 2 : 1;
  kernel_builder kb;
  kvalue tile = kb.output_range(N / tile_rows / tiles_a_step);
  if (tiles_a_step > 1) tile = tile * tiles_a_step + kb.output_range(tiles_a_step);
  auto t = kb.output_range(kb.variable(rows));
  auto r = kb.output_range(tile_rows);
  auto g = kb.reduce_range(subs);
  auto at = (tile * subs + g) * f.sub_bytes();  // the sub-block's bytes
  auto quants = at + f.header_bytes();
  // Groups of n values of a row (pairs, or quads of unsigned bytes against the activations'
  // signed bytes, slot 2 then int8: activation_byte_kernel).
  const std::int64_t per = f.group();
  auto group_dot = [&] {
    auto p = kb.reduce_range(f.sub / per);
    auto e = kb.reduce_range(per);
    auto at_q = p * (per * tile_rows) + r * per + e;
    auto nibble = [&] {  // quad p: the low nibbles of the bytes of step p % 4, or their high ones
      auto byte = kb.load<std::uint8_t>(slot, quants + (p % 4) * (4 * tile_rows) + r * 4 + e);
      return (byte >> kb.cast(dtype::uint8, (p / 4) * 4)) & 15;
    };
    auto q = f.wide ? kb.load<std::int16_t>(slot, quants / 2 + at_q)
           : f.nibbles ? nibble()
           : f.quads ? kb.load<std::uint8_t>(slot, quants + at_q) : kb.load<std::int8_t>(slot, quants + at_q);
    // Without VNNI, quads are vpmaddubsw, which needs its unsigned bytes proven below 128 (LLVM's
    // known bits): a loaded byte is masked to the type's bits, which it never exceeds.
    if (f.quads && !f.nibbles && !cpu::host_cpu_target().vnni && quad_bits(w.type) < 8) q = q & ((1 << quad_bits(w.type)) - 1);
    auto x_at = t * K + g * f.sub + p * per + e;
    auto xq = f.quads ? kb.load<std::int8_t>(2, x_at) : kb.load<std::int16_t>(2, x_at);
    return kb.sum(kb.sum_lanes(kb.cast(dtype::int32, q) * kb.cast(dtype::int32, xq), e), p);
  };
  auto s = kb.load<float>(5, t * (K / act_block) + (g * f.sub) / act_block);
  auto sub_block_term = [&] {  // one float step per 32 values: dot * (a * s) - b * (s * sum x)
    auto dot = f.fifth_bits ? fifth_bit_dot(kb, slot, f, tile_rows, quants, t * K + g * f.sub, r) : group_dot();
    auto a = f.half_scales ? kb.cast(dtype::float32, kb.load(slot, dtype::float16, at / 2 + r)) : kb.load<float>(slot, at / 4 + r);
    auto term = kb.cast(dtype::float32, dot) * (a * s);
    if (!f.offsets && f.zero == 0) return term;
    // Q8_0's offset 128 a and Q4_0's 8 a are computed here (their headers hold only the fp16 a).
    auto b = !f.offsets      ? a * double(f.zero)
             : f.half_scales ? kb.cast(dtype::float32, kb.load(slot, dtype::float16, at / 2 + tile_rows + r))
                             : kb.load<float>(slot, at / 4 + tile_rows + r);
    // The per-32 sums: s * sum as float for 32-value activation blocks, the integer sum for 256.
    auto xsum = act_block == 32 ? kb.load<float>(6, t * (K / 32) + g)
                                : kb.cast(dtype::float32, kb.load<std::int32_t>(6, t * (K / 32) + g)) * s;
    return term - b * xsum;
  };
  auto term = f.whole != super_block_layout::none
                  ? super_block_term(f.whole, kb, slot, tile_rows, at, t, K, g, s, r, token_lanes == 1 ? tile_prefetch_distance : 0)
                  : sub_block_term();
  // One token streams the tiles as decode streams a file (linear_kernels.cpp: prefetch_distance);
  // the super-block layouts ask for their lines inside their loops (super_block_tiles.cpp:
  // six_bit_term says why).
  if (token_lanes == 1 && f.whole == super_block_layout::none)
    for (std::int64_t line = 0; line * 64 < f.sub_bytes(); ++line) term = kb.prefetch(slot, at + (tile_prefetch_distance + line * 64), term);
  auto acc = kb.sum(term, g);
  auto n = tile * tile_rows + r;
  if (epilogue.bias) acc = acc + kb.load<float>(4, n);
  if (epilogue.residual) acc = acc + kb.load<float>(3, t * N + n);
  kb.store(0, t * N + n, acc);
  ast::kernel k = kb.finish();
  k.upcast = tiles_a_step > 1 ? std::vector<int>{1, int(tiles_a_step), token_lanes, int(tile_rows)}
                              : std::vector<int>{1, token_lanes, int(tile_rows)};
  k.vector_lanes = true;
  return k;
}

}  // namespace tg::model
