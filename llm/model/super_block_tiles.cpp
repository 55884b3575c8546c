// super_block_tiles.cpp: the row-tile layouts that keep K-quant super-blocks whole (super_block_tiles.hpp).
#include "llm/model/super_block_tiles.hpp"

#include <cstring>

#include "llm/model/linear_kernels.hpp"

namespace tg::model {

// Sub-block j's 6-bit scale and minimum from a K-quant block's 12 packed bytes s (ggml-quants.c:
// get_scale_min_k4).
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

namespace {

// Row r's part of the header Q4_K's and Q5_K's layouts share: the file's d and dmin, its packed
// 6-bit scales and minimums a byte each.
void write_k_header(const std::uint8_t* src, std::int64_t R, std::int64_t r, std::uint8_t* at) {
  std::memcpy(at + 2 * r, src, 2);            // d
  std::memcpy(at + 2 * (R + r), src + 2, 2);  // dmin
  for (int j = 0; j < 8; ++j) {
    const auto [sc, m] = k_scale_min(src + 4, j);
    at[4 * R + j * R + r] = std::uint8_t(sc);
    at[12 * R + j * R + r] = std::uint8_t(m);
  }
}

// Q4_K's super-block tiles (super_block_layout::k_nibbles): the file's d, dmin and nibble bytes as they
// are, its packed 6-bit scales and minimums unpacked to a byte each.
void repack_k_nibbles(const weight& w, std::int64_t R, const std::uint8_t* file, std::int64_t tile, std::uint8_t* out) {
  const std::int64_t blocks = w.cols / 256;
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    std::uint8_t* at = out + (tile * blocks + blk) * 148 * R;
    for (std::int64_t r = 0; r < R; ++r) {
      const std::uint8_t* src = file + (tile * R + r) * w.row_bytes + blk * 144;
      write_k_header(src, R, r, at);
      for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t p = 0; p < 8; ++p) std::memcpy(at + 20 * R + ((8 * i + p) * R + r) * 4, src + 16 + 32 * i + 4 * p, 4);
    }
  }
}

// Q5_K's decode tiles (super_block_layout::five_planes): the header as Q4_K's, then per sub-block the
// 8 quads' 5-bit values, the first five in their planes' low bits, the last three spread over
// the planes' top 3 bits: quad 5's bits 0-2 in plane 0, 3-4 in plane 1 (bits 5-6); quad 6's
// likewise in planes 2 and 3; quad 7's bit 0 in plane 1's bit 7, bit 1 in plane 3's, bits 2-4
// in plane 4's top 3. Each is then a shift, a mask and an or or two (five_plane_term).
void repack_five_planes(const weight& w, std::int64_t R, const std::uint8_t* file, std::int64_t tile, std::uint8_t* out) {
  const std::int64_t blocks = w.cols / 256;
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    std::uint8_t* at = out + (tile * blocks + blk) * 180 * R;
    for (std::int64_t r = 0; r < R; ++r) {
      const std::uint8_t* src = file + (tile * R + r) * w.row_bytes + blk * 176;
      write_k_header(src, R, r, at);
      for (int j = 0; j < 8; ++j) {
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

// Q6_K's decode tiles (super_block_layout::six_bits): the file's d and scales as they are, its 6-bit
// values regrouped so that a group's fourth quad is the top 2 bits of the three planes before it.
void repack_six_bits(const weight& w, std::int64_t R, const std::uint8_t* file, std::int64_t tile, std::uint8_t* out) {
  const std::int64_t blocks = w.cols / 256;
  std::uint8_t v[256];
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    std::uint8_t* at = out + (tile * blocks + blk) * 210 * R;
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

// The term of one Q4_K super-block (super_block_layout::k_nibbles) for row r and token t: per sub-block
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

// The term of one Q6_K super-block (super_block_layout::six_bits) for row r and token t: per 16-value
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

// The term of one Q5_K super-block (super_block_layout::five_planes) for row r and token t: per
// sub-block j its 8 quads from five planes (repack_five_planes), dotted with the activations'
// bytes (pmaddubsw + pmaddwd without VNNI: the values stay below 32), times the sub-block's
// scale (folded into the pmaddwd), then Q4_K's float step with the minimums. Against the file
// kernel (Zen 3, 2 threads, matvec_types_bench, 4096 wide, GB/s, interleaved runs): in L2
// (MATVEC_HOT=1 MATVEC_MB=1) 27-30 -> 30-40, 80 instructions and 16.4 cycles per sub-block of 8
// rows (llvm-mca, znver3) where the file kernel took 26.2 cycles per super-block of one row;
// streamed 17-30 -> 31-34 (97-116% of the same-run probe). Prefill keeps its whole-byte quads:
// from these planes (4 tokens a step) the 1B-shaped Q5_K file's gate/up took 1454-1596 ms per
// 256 tokens against 1234-1298 (Zen 3, two interleaved runs); 5-bit pair sums cannot accumulate
// in int16 as Q4_K's nibbles do (x86_dot_sums.cpp: x86_narrow_quad_sums).
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

}  // namespace

std::int64_t super_block_bytes(super_block_layout layout, std::int64_t R) {
  switch (layout) {
    case super_block_layout::k_nibbles: return 148 * R;
    case super_block_layout::five_planes: return 180 * R;
    case super_block_layout::six_bits: return 210 * R;
    case super_block_layout::none: break;
  }
  return 0;
}

void repack_super_blocks(super_block_layout layout, const weight& w, std::int64_t R, const std::uint8_t* file, std::int64_t tile,
                         std::uint8_t* out) {
  if (layout == super_block_layout::k_nibbles) repack_k_nibbles(w, R, file, tile, out);
  if (layout == super_block_layout::five_planes) repack_five_planes(w, R, file, tile, out);
  if (layout == super_block_layout::six_bits) repack_six_bits(w, R, file, tile, out);
}

kvalue super_block_term(super_block_layout layout, kernel_builder& kb, int slot, std::int64_t R, kvalue at, kvalue t, std::int64_t K,
                        kvalue g, kvalue s, kvalue r, std::int64_t ahead) {
  const kvalue x_at = t * K + g * 256, sums_at = t * (K / 32) + g * 8;
  if (layout == super_block_layout::k_nibbles) return k_nibble_term(kb, slot, R, at, x_at, sums_at, s, r, ahead);
  if (layout == super_block_layout::five_planes) return five_plane_term(kb, slot, R, at, x_at, sums_at, s, r, ahead);
  return six_bit_term(kb, slot, R, at, x_at, t * (K / 8) + g * 32, s, r, ahead);
}

}  // namespace tg::model
