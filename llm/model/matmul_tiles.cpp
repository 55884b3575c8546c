// matmul_tiles.cpp: the row-tiled weight layout (matmul_tiles.hpp) and its prefill matmul.
#include "llm/model/matmul_tiles.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>
#include <tg/core/error.hpp>

#include "drivers/cpu/cpu_target.hpp"

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
  // Q4_K as quads: its super-blocks whole (sub = 256), each row's fp16 d and dmin, then its 8
  // sub-block scales and 8 minimums as bytes (sc[j] at 4R + jR + r, m[j] at 12R + jR + r), then
  // the file's nibble bytes, row r's bytes 4p..4p+3 of sub-block pair i at (8i + p) * 4R + 4r
  // (sub-block 2i's values 4p.. in the low nibbles, 2i + 1's in the high ones): 148 bytes per
  // 256 values and row against the file's 144, so decode reads these tiles too.
  bool k_nibbles = false;
  // Q6_K's decode tiles: its super-blocks whole (sub = 256), each row's fp16 d (at 2r), its 16
  // int8 scales (sc[g] at 2R + gR + r), then per 16-value group g three 4-byte planes k (at
  // 18R + ((3g + k) R + r) 4), byte e of plane k holding value 16g + 4k + e in bits 0-5 and bits
  // 2k, 2k + 1 of value 16g + 12 + e in bits 6-7: the file's 210 bytes per 256 values and row.
  bool six_bits = false;
  // Q5_K's decode tiles: Q4_K's super-block header (d, dmin, 8 scales and 8 minimums as bytes),
  // then per 32-value sub-block j five 4-byte planes k (at 20R + ((5j + k) R + r) 4), byte e of
  // plane k holding value 32j + 4k + e in bits 0-4 and in bits 5-7 parts of the sub-block's last
  // three quads (repack_five_planes): 180 bytes per 256 values and row against the file's 176.
  bool five_planes = false;
  std::int64_t header_bytes() const {
    if (k_nibbles || five_planes) return 20 * rows;
    if (six_bits) return 18 * rows;
    return (half_scales ? (offsets ? 4 : 2) : offsets ? 8 : 4) * rows;
  }
  std::int64_t quant_bytes() const { return wide ? 2 : 1; }
  std::int64_t group() const { return quads ? 4 : 2; }  // values of a row side by side
  std::int64_t nibble_bytes() const { return sub * rows / 2; }
  std::int64_t sub_bytes() const {
    if (six_bits) return header_bytes() + sub * rows * 3 / 4;
    if (five_planes) return header_bytes() + sub * rows * 5 / 8;
    return header_bytes() + (nibbles ? nibble_bytes() + (fifth_bits ? sub * rows / 8 : 0) : sub * rows * quant_bytes());
  }
};

// Types with a minimum (W = d q + m) carry offsets. As pairs every quant is widened to int8:
// unpacking nibbles or fifth bits per use costs the inner loop more than the bytes save (Q4_K
// nibbles: a shift and a mask per pair beside the 8 vpdpwssd). As quads the Q4 types keep their
// nibbles: a shift and a mask per 32 bytes feed 4 tokens' quad dots (k_nibble_term for Q4_K).
// Q6_K's 16-value scales are folded into int16 quants ((q - 32) * sc, |.| <= 4096; a 256-value dot stays under 2^27), so one float
// step covers 256 values: with int8 quants its 8-pair inner loop was unrolled, and LLVM split
// each vpdpwssd into vpmaddwd + vpaddd (its fast-dpwssd tuning is off for these CPUs),
// twice the vector work. Measured on Qwen2.5-0.5B's ffn_down (896 x 4864, 32 tokens, 2
// threads, Xeon rocketlake-class): Q8_0 1.8 ms; Q4_K 3.1 ms as nibbles, 2.0 as int8; Q6_K
// 3.1 ms as int8 in 16-value sub-blocks, 2.0 as int16 in 256.
// With `decode`, the layout decode reads (decode_tiles where the type has its own: has_decode_layout).
tile_format format_of(tensor_type type, std::int64_t rows, bool quads, bool decode = false) {
  if (type == tensor_type::q6_k && decode) return {.rows = rows, .sub = 256, .quads = true, .six_bits = true};
  if (type == tensor_type::q6_k) return {rows, 256, false, true};  // int16: always pairs
  const std::int64_t zero = !quads ? 0 : type == tensor_type::q8_0 ? 128 : type == tensor_type::q4_0 ? 8 : type == tensor_type::q5_0 ? 16 : 0;
  if (type == tensor_type::q8_0) return {rows, 32, false, false, true, quads, zero};
  if (type == tensor_type::q4_k && quads) return {rows, 256, true, false, true, true, 0, true, false, true};
  if (type == tensor_type::q5_k && quads && decode)
    return {.rows = rows, .sub = 256, .offsets = true, .half_scales = true, .quads = true, .five_planes = true};
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

// Sub-block j's 6-bit scale and minimum from a K-quant block's 12 packed bytes s (ggml-quants.c:
// get_scale_min_k4).
struct scale_min {
  int sc, m;
};
scale_min k_scale_min(const std::uint8_t* s, int j) {
  if (j < 4) return {s[j] & 63, s[j + 4] & 63};
  return {(s[j + 4] & 0x0F) | (s[j - 4] >> 6) << 4, (s[j + 4] >> 4) | (s[j] >> 6) << 4};
}

// A Q6_K block's 256 values as the file's unsigned 6 bits (q + 32): value 128 h + 32 k + l (l <
// 32) from ql's nibbles and qh's 2-bit fields (ggml-quants.c: dequantize_row_q6_K).
void q6_k_values(const std::uint8_t* blk, std::uint8_t* v) {
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const std::uint8_t* ql = blk + 64 * h;
      const std::uint8_t high = blk[128 + 32 * h + l];
      std::uint8_t* out = v + 128 * h + l;
      out[0] = std::uint8_t((ql[l] & 15) | (high & 3) << 4);
      out[32] = std::uint8_t((ql[l + 32] & 15) | ((high >> 2) & 3) << 4);
      out[64] = std::uint8_t((ql[l] >> 4) | ((high >> 4) & 3) << 4);
      out[96] = std::uint8_t((ql[l + 32] >> 4) | ((high >> 6) & 3) << 4);
    }
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

// Q4_K's super-block tiles (tile_format::k_nibbles): the file's d, dmin and nibble bytes as they
// are, its packed 6-bit scales and minimums unpacked to a byte each.
void repack_k_nibbles(const weight& w, const tile_format& f, const std::uint8_t* file, std::int64_t tile, std::uint8_t* out) {
  const std::int64_t blocks = w.cols / 256, R = f.rows;
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    std::uint8_t* at = out + (tile * blocks + blk) * f.sub_bytes();
    for (std::int64_t r = 0; r < R; ++r) {
      const std::uint8_t* src = file + (tile * R + r) * w.row_bytes + blk * 144;
      std::memcpy(at + 2 * r, src, 2);            // d
      std::memcpy(at + 2 * (R + r), src + 2, 2);  // dmin
      for (int j = 0; j < 8; ++j) {
        const auto [sc, m] = k_scale_min(src + 4, j);
        at[4 * R + j * R + r] = std::uint8_t(sc);
        at[12 * R + j * R + r] = std::uint8_t(m);
      }
      for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t p = 0; p < 8; ++p) std::memcpy(at + 20 * R + ((8 * i + p) * R + r) * 4, src + 16 + 32 * i + 4 * p, 4);
    }
  }
}

// Q5_K's decode tiles (tile_format::five_planes): the header as Q4_K's, then per sub-block the
// 8 quads' 5-bit values, the first five in their planes' low bits, the last three spread over
// the planes' top 3 bits: quad 5's bits 0-2 in plane 0, 3-4 in plane 1 (bits 5-6); quad 6's
// likewise in planes 2 and 3; quad 7's bit 0 in plane 1's bit 7, bit 1 in plane 3's, bits 2-4
// in plane 4's top 3. Each is then a shift, a mask and an or or two (five_plane_term).
void repack_five_planes(const weight& w, const tile_format& f, const std::uint8_t* file, std::int64_t tile, std::uint8_t* out) {
  const std::int64_t blocks = w.cols / 256, R = f.rows;
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    std::uint8_t* at = out + (tile * blocks + blk) * f.sub_bytes();
    for (std::int64_t r = 0; r < R; ++r) {
      const std::uint8_t* src = file + (tile * R + r) * w.row_bytes + blk * 176;
      std::memcpy(at + 2 * r, src, 2);            // d
      std::memcpy(at + 2 * (R + r), src + 2, 2);  // dmin
      for (int j = 0; j < 8; ++j) {
        const auto [sc, m] = k_scale_min(src + 4, j);
        at[4 * R + j * R + r] = std::uint8_t(sc);
        at[12 * R + j * R + r] = std::uint8_t(m);
        // value 32j + l: qs's nibble (low for even j) and qh's bit j (dequantize_row_q5_K)
        auto v = [&](int l) { return ((src[48 + 32 * (j / 2) + l] >> (4 * (j % 2))) & 15) | ((src[16 + l] >> j) & 1) << 4; };
        for (int e = 0; e < 4; ++e) {
          const int v5 = v(20 + e), v6 = v(24 + e), v7 = v(28 + e);
          const int spare[5] = {(v5 & 7) << 5, ((v5 >> 3) & 3) << 5 | (v7 & 1) << 7, (v6 & 7) << 5,
                                ((v6 >> 3) & 3) << 5 | ((v7 >> 1) & 1) << 7, ((v7 >> 2) & 7) << 5};
          for (int k = 0; k < 5; ++k) at[20 * R + ((5 * j + k) * R + r) * 4 + e] = std::uint8_t(v(4 * k + e) | spare[k]);
        }
      }
    }
  }
}

// Q6_K's decode tiles (tile_format::six_bits): the file's d and scales as they are, its 6-bit
// values regrouped so that a group's fourth quad is the top 2 bits of the three planes before it.
void repack_six_bits(const weight& w, const tile_format& f, const std::uint8_t* file, std::int64_t tile, std::uint8_t* out) {
  const std::int64_t blocks = w.cols / 256, R = f.rows;
  std::uint8_t v[256];
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    std::uint8_t* at = out + (tile * blocks + blk) * f.sub_bytes();
    for (std::int64_t r = 0; r < R; ++r) {
      const std::uint8_t* src = file + (tile * R + r) * w.row_bytes + blk * 210;
      std::memcpy(at + 2 * r, src + 208, 2);  // d
      for (std::int64_t g = 0; g < 16; ++g) at[2 * R + g * R + r] = src[192 + g];
      q6_k_values(src, v);
      for (std::int64_t g = 0; g < 16; ++g)
        for (std::int64_t k = 0; k < 3; ++k)
          for (std::int64_t e = 0; e < 4; ++e)
            at[18 * R + ((3 * g + k) * R + r) * 4 + e] =
                std::uint8_t(v[16 * g + 4 * k + e] | ((v[16 * g + 12 + e] >> (2 * k)) & 3) << 6);
    }
  }
}

// Writes tile `tile` of w (file bytes `file`) into `out` (the layout of matmul_tiles.hpp):
// per file block, its rows decoded first, then the tile's bytes written in order.
void repack_tile(const weight& w, const tile_format& f, const std::uint8_t* file, std::int64_t tile, std::uint8_t* out) {
  const auto& traits = gguf::traits_of(w.type);
  if (f.k_nibbles) return repack_k_nibbles(w, f, file, tile, out);
  if (f.six_bits) return repack_six_bits(w, f, file, tile, out);
  if (f.five_planes) return repack_five_planes(w, f, file, tile, out);
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

// A K-quant super-block's float step from its integer dot `scaled` (sum of sc dot) for the
// layouts with Q4_K's header: d s scaled - dmin s sum(m xsum), the minimums times the
// activations' per-32 integer sums. The minimums' 8 terms are written out, not a loop: a loop
// of its own would put the two products in different blocks for one kernel and the same block
// for another, and LLVM would contract a different one into the fma, so that one token lane and
// four would round a row differently.
kvalue k_super_block_step(kernel_builder& kb, int slot, std::int64_t R, kvalue at, kvalue scaled, kvalue sums_at, kvalue s, kvalue r) {
  kvalue mins;
  for (int j = 0; j < 8; ++j) {
    auto m = kb.cast(dtype::int32, kb.load<std::uint8_t>(slot, at + (12 + j) * R + r));
    auto term = m * kb.load<std::int32_t>(6, sums_at + kb.index(j));
    mins = j ? mins + term : term;
  }
  auto d = kb.cast(dtype::float32, kb.load(slot, dtype::float16, at / 2 + r));
  auto dmin = kb.cast(dtype::float32, kb.load(slot, dtype::float16, at / 2 + R + r));
  return kb.cast(dtype::float32, scaled) * (d * s) - kb.cast(dtype::float32, mins) * (dmin * s);
}

// The term of one Q4_K super-block (tile_format::k_nibbles) for row r and token t: per sub-block
// pair i the low and high nibbles' quad dots, each over 8 steps of 4 bytes (LLVM adds them as
// pmaddubsw's int16 pairs without VNNI: x86_dot_sums.cpp), times their sub-block's integer scale,
// and the minimums times the activations' per-32 integer sums, all in int32 (|sum| < 2^26), then
// one float step per super-block (k_super_block_step).
// Against Q4_K's whole-byte quads with a float step per 32 values (1B Q4_K_M, Zen 3, 2 threads,
// same run): prefill gate/up 1182 -> 1103 ms per 256 tokens (the Q6_K down projection, not
// changed, 453 -> 463); decode's loop over a sub-block pair of 8 rows 20.6 cycles (llvm-mca,
// znver3; LLVM folds the scale into the vpmaddwd that widens the pairs), half the file kernel's
// per byte: with the weights in L2 (matvec_types_bench, MATVEC_HOT=1 MATVEC_MB=1) 14-18 -> 31-37
// GB/s, while streamed from memory both stay at the machine's 22-28; peak memory 2.37 -> 1.42
// GB, the 10-bit copy gone and the file's pages released. Q5_K in this layout with Q5_0's
// fifth-bit bytes was tried for its decode and left out: 13-17 GB/s in L2 against 15.5-17.8 from
// its file, the fifth bits' expansion (a shuffle, three masks and an or a step) as costly there;
// its five planes (five_plane_term) need no shuffle.
kvalue k_nibble_term(kernel_builder& kb, int slot, std::int64_t R, kvalue at, kvalue x_at, kvalue sums_at, kvalue s, kvalue r,
                     std::int64_t ahead) {
  auto i = kb.reduce_range(4);
  auto quants = at + 20 * R + i * (32 * R);
  kvalue scaled;
  for (int high = 0; high < 2; ++high) {
    auto p = kb.reduce_range(8);
    auto e = kb.reduce_range(4);
    auto byte = kb.load<std::uint8_t>(slot, quants + p * (4 * R) + r * 4 + e);
    auto q = high ? byte >> kb.constant(dtype::uint8, 4) : byte & 15;
    auto xq = kb.load<std::int8_t>(2, x_at + i * 64 + kb.index(32 * high) + p * 4 + e);
    auto dot = kb.sum(kb.sum_lanes(kb.cast(dtype::int32, q) * kb.cast(dtype::int32, xq), e), p);
    auto sc = kb.cast(dtype::int32, kb.load<std::uint8_t>(slot, at + 4 * R + (i * 2 + kb.index(high)) * R + r));
    scaled = high ? scaled + dot * sc : dot * sc;
  }
  if (ahead > 0)  // a quarter of the super-block's lines per sub-block pair (six_bit_term says why)
    for (std::int64_t line = 0; line * 64 < 37 * R; ++line) scaled = kb.prefetch(slot, at + (ahead + line * 64) + i * (37 * R), scaled);
  return k_super_block_step(kb, slot, R, at, kb.sum(scaled, i), sums_at, s, r);
}

// The term of one Q6_K super-block (tile_format::six_bits) for row r and token t: per 16-value
// group its three planes' low 6 bits and the fourth quad gathered from their top 2 bits, each
// quad dotted with the activations' bytes (pmaddubsw + pmaddwd without VNNI: the values stay
// below 64) and scaled by the group's int8 scale (folded into the pmaddwd: x86_dot_sums.cpp). The
// zero point comes off as sc * 32 * (the group's sum of activations): one pmaddwd of (sc, sc)
// against the two halves' sums times 32 (activation_sum8_kernel, slot 9) per group, where the
// file kernel takes a second quad dot of 32 against the activations per step. Then one float
// step per super-block, d s (sum(sc dot) - 32 sum(sc xsum)), the same integer as the file
// kernel's (|.| < 2^29), so the result is too.
// Against that kernel (Zen 3, 2 threads, matvec_types_bench, GB/s): in L2 (MATVEC_HOT=1
// MATVEC_MB=1) 16-27 -> 39-49, 37 instructions and 7.9 cycles per group of 8 rows (llvm-mca,
// znver3) where the file kernel took 148 and 32 per super-block of one row; streamed 22-26 -> 30-37.
kvalue six_bit_term(kernel_builder& kb, int slot, std::int64_t R, kvalue at, kvalue x_at, kvalue sums8_at, kvalue s, kvalue r,
                    std::int64_t ahead) {
  auto g = kb.reduce_range(16);
  auto e = kb.reduce_range(4);
  auto bits = [&](int n) { return kb.constant(dtype::uint8, n); };
  auto plane = [&](int k) { return kb.load<std::uint8_t>(slot, at + 18 * R + (g * 3 + kb.index(k)) * (4 * R) + r * 4 + e); };
  const kvalue p[3] = {plane(0), plane(1), plane(2)};
  const kvalue q[4] = {p[0] & 63, p[1] & 63, p[2] & 63, (p[0] >> bits(6)) | ((p[1] >> bits(4)) & 12) | ((p[2] >> bits(2)) & 48)};
  kvalue dot;
  for (int k = 0; k < 4; ++k) {
    auto xq = kb.load<std::int8_t>(2, x_at + g * 16 + kb.index(4 * k) + e);
    auto part = kb.sum_lanes(kb.cast(dtype::int32, q[k]) * kb.cast(dtype::int32, xq), e);
    dot = k ? dot + part : part;
  }
  // A group's share of the super-block's lines (210R / 16 bytes a group), asked for inside the
  // loop: the 27 lines of an 8-row super-block asked for at once before it streamed at 15-20 GB/s
  // (53-64% of the same-run probe), spread over its groups at 30-37 (98-118%), and with no
  // prefetch at 21-29 (matvec_types_bench, 4096 wide, 2 threads, Zen 3). Q4_K's super-blocks
  // (k_nibble_term) likewise: 27-30 -> 32-39 GB/s.
  if (ahead > 0)
    for (std::int64_t line = 0; line * 64 < 210 * R / 16; ++line) dot = kb.prefetch(slot, at + (ahead + line * 64) + g * (210 * R / 16), dot);
  auto sc = [&](kvalue group) { return kb.cast(dtype::int32, kb.load<std::int8_t>(slot, at + 2 * R + group * R + r)); };
  auto scaled = kb.sum(dot * sc(g), g);
  auto h = kb.reduce_range(16);
  auto half = kb.reduce_range(2);
  auto zero = kb.sum(kb.sum_lanes(sc(h) * kb.cast(dtype::int32, kb.load<std::int16_t>(activation_sums8_slot, sums8_at + h * 2 + half)), half), h);
  auto d = kb.cast(dtype::float32, kb.load(slot, dtype::float16, at / 2 + r));
  return kb.cast(dtype::float32, scaled - zero) * (d * s);
}

// The term of one Q5_K super-block (tile_format::five_planes) for row r and token t: per
// sub-block j its 8 quads from five planes (repack_five_planes), dotted with the activations'
// bytes (pmaddubsw + pmaddwd without VNNI: the values stay below 32), times the sub-block's
// scale (folded into the pmaddwd), then Q4_K's float step with the minimums. Against the file
// kernel (Zen 3, 2 threads, matvec_types_bench, 4096 wide, GB/s, interleaved runs): in L2
// (MATVEC_HOT=1 MATVEC_MB=1) 27-30 -> 30-40, 80 instructions and 16.4 cycles per sub-block of 8
// rows (llvm-mca, znver3) where the file kernel took 26.2 cycles per super-block of one row;
// streamed 17-30 -> 31-34 (97-116% of the same-run probe).
kvalue five_plane_term(kernel_builder& kb, int slot, std::int64_t R, kvalue at, kvalue x_at, kvalue sums_at, kvalue s, kvalue r,
                       std::int64_t ahead) {
  auto j = kb.reduce_range(8);
  auto e = kb.reduce_range(4);
  auto bits = [&](int n) { return kb.constant(dtype::uint8, n); };
  auto plane = [&](int k) { return kb.load<std::uint8_t>(slot, at + 20 * R + (j * 5 + kb.index(k)) * (4 * R) + r * 4 + e); };
  const kvalue p[5] = {plane(0), plane(1), plane(2), plane(3), plane(4)};
  const kvalue q[8] = {p[0] & 31, p[1] & 31, p[2] & 31, p[3] & 31, p[4] & 31,
                       (p[0] >> bits(5)) | ((p[1] >> bits(2)) & 24), (p[2] >> bits(5)) | ((p[3] >> bits(2)) & 24),
                       (p[1] >> bits(7)) | ((p[3] >> bits(6)) & 2) | ((p[4] >> bits(3)) & 28)};
  kvalue dot;
  for (int c = 0; c < 8; ++c) {
    auto xq = kb.load<std::int8_t>(2, x_at + j * 32 + kb.index(4 * c) + e);
    auto part = kb.sum_lanes(kb.cast(dtype::int32, q[c]) * kb.cast(dtype::int32, xq), e);
    dot = c ? dot + part : part;
  }
  if (ahead > 0)  // a sub-block's share of the super-block's lines (six_bit_term says why)
    for (std::int64_t line = 0; line * 64 < 180 * R / 8; ++line) dot = kb.prefetch(slot, at + (ahead + line * 64) + j * (180 * R / 8), dot);
  auto sc = kb.cast(dtype::int32, kb.load<std::uint8_t>(slot, at + 4 * R + j * R + r));
  return k_super_block_step(kb, slot, R, at, kb.sum(dot * sc, j), sums_at, s, r);
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
bool reads_activation_bytes(const weight& w) { return w.tile_rows > 0 && w.tile_quads; }
bool tiles_take_sums(const weight& w) {
  if (w.tile_rows == 0) return false;
  const tile_format f = format_of(w.type, w.tile_rows, w.tile_quads);
  return f.offsets || f.zero > 0;
}

ast::kernel tiled_matmul_kernel(const weight& w, matmul_epilogue epilogue, int token_lanes, launch_var rows, bool decode) {
  if (w.tile_rows == 0) throw usage_error(str("tiled_matmul_kernel: weight ", w.name, " has no tiles (add_tiles)"));
  const tile_format f = format_of(w.type, w.tile_rows, w.tile_quads, decode);
  const int slot = decode && has_decode_layout(w.type, w.tile_quads) ? decode_tiles_slot : tiles_slot;
  const std::int64_t tile_rows = w.tile_rows;
  const std::int64_t K = w.cols, N = w.rows, subs = K / f.sub, act_block = activation_block_for(w);
  kernel_builder kb;
  auto tile = kb.output_range(N / tile_rows);
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
  auto term = f.k_nibbles ? k_nibble_term(kb, slot, tile_rows, at, t * K + g * f.sub, t * (K / 32) + g * 8, s, r,
                                          token_lanes == 1 ? tile_prefetch_distance : 0)
             : f.six_bits ? six_bit_term(kb, slot, tile_rows, at, t * K + g * f.sub, t * (K / 8) + g * 32, s, r,
                                         token_lanes == 1 ? tile_prefetch_distance : 0)
             : f.five_planes ? five_plane_term(kb, slot, tile_rows, at, t * K + g * f.sub, t * (K / 32) + g * 8, s, r,
                                               token_lanes == 1 ? tile_prefetch_distance : 0)
                          : sub_block_term();
  // One token streams the tiles as decode streams a file (linear_kernels.cpp: prefetch_distance);
  // the super-block layouts ask for their lines inside their loops (six_bit_term says why).
  if (token_lanes == 1 && !f.six_bits && !f.k_nibbles && !f.five_planes)
    for (std::int64_t line = 0; line * 64 < f.sub_bytes(); ++line) term = kb.prefetch(slot, at + (tile_prefetch_distance + line * 64), term);
  auto acc = kb.sum(term, g);
  auto n = tile * tile_rows + r;
  if (epilogue.bias) acc = acc + kb.load<float>(4, n);
  if (epilogue.residual) acc = acc + kb.load<float>(3, t * N + n);
  kb.store(0, t * N + n, acc);
  ast::kernel k = kb.finish();
  k.upcast = {1, token_lanes, int(tile_rows)};
  k.vector_lanes = true;
  return k;
}

}  // namespace tg::model
