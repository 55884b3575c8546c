// super_block_tiles.hpp: the row-tile layouts (matmul_tiles.hpp) that keep a K-quant's
// super-blocks whole, with one float step per 256 values and no more bytes than a 32nd over the
// file's, so that decode reads them in place of the file: Q4_K's nibbles (prefill's tiles too),
// Q5_K's five planes and Q6_K's six bits (decode's own tiles). Per layout: its bytes, the
// repacking of a tile from the file's blocks, and its term in the tiled matmul.
#pragma once
#include <cstdint>

#include <tg/ast/kernel_builder.hpp>

#include "llm/model/weight.hpp"

namespace tg::model {

// Per super-block of a tile of R rows (each row's part at r, or r x 4 in a quad plane):
// - k_nibbles (Q4_K): fp16 d[R] and dmin[R], the 8 scales and 8 minimums a byte each (sc[j] at
//   4R + jR + r, m[j] at 12R + jR + r), then the file's nibble bytes, row r's bytes 4p..4p+3 of
//   sub-block pair i at 20R + ((8i + p) R + r) 4: 148 bytes per 256 values and row (the file's 144).
// - five_planes (Q5_K): that header, then per 32-value sub-block j five planes k at 20R + ((5j +
//   k) R + r) 4, byte e of plane k holding value 32j + 4k + e in bits 0-4 and in bits 5-7 parts
//   of the sub-block's last three quads: 180 bytes (the file's 176).
// - six_bits (Q6_K): fp16 d[R], the 16 int8 scales (sc[g] at 2R + gR + r), then per 16-value
//   group g three planes k at 18R + ((3g + k) R + r) 4, byte e of plane k holding value 16g + 4k
//   + e in bits 0-5 and bits 2k, 2k + 1 of value 16g + 12 + e in bits 6-7: the file's 210 bytes.
enum class super_block_layout { none, k_nibbles, five_planes, six_bits };

// The bytes of one super-block of a tile of R rows in `layout` (0 for none).
std::int64_t super_block_bytes(super_block_layout layout, std::int64_t R);
// Writes tile `tile` of w (file bytes `file`, R rows a tile) into `out`, the start of all tiles.
void repack_super_blocks(super_block_layout layout, const weight& w, std::int64_t R, const std::uint8_t* file, std::int64_t tile,
                         std::uint8_t* out);
// The term of the super-block whose bytes start at `at` (of slot `slot`) for tile row r and
// token t over K-wide rows, super-block g, s the activations' scale for it: the activations'
// bytes in slot 2, their per-32 integer sums in slot 6 (k_nibbles, five_planes) or per-8 sums
// in slot 9 (six_bits: activation_sum8_kernel). `ahead`: bytes ahead to prefetch (0: none).
kvalue super_block_term(super_block_layout layout, kernel_builder& kb, int slot, std::int64_t R, kvalue at, kvalue t, std::int64_t K,
                        kvalue g, kvalue s, kvalue r, std::int64_t ahead);

// Sub-block j's 6-bit scale and minimum from a K-quant block's 12 packed bytes s (ggml-quants.c:
// get_scale_min_k4).
struct scale_min {
  int sc, m;
};
scale_min k_scale_min(const std::uint8_t* s, int j);
// A Q6_K block's 256 values as the file's unsigned 6 bits (q + 32) (ggml-quants.c: dequantize_row_q6_K).
void q6_k_values(const std::uint8_t* blk, std::uint8_t* v);

}  // namespace tg::model
