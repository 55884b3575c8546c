// dequant_kernel.hpp: one weight value, decoded from its GGUF block bytes inside a kernel,
// in three forms:
//   dequant      any supported type, as float; row split into groups g of group_size values
//                (the embedding gather, and matmuls of types without the forms below);
//   dequant_lanes  plain floats over a vector of lanes (float matmuls);
//   int_form     Q8_0, Q4_0/1, Q5_0/1, Q4_K, Q5_K, Q6_K as a * q - b with a small integer q,
//                for matmuls over 8-bit activations (integer dot products).
// Weights stay in their file encoding; every field is loaded as uint8/int8/float16 and
// unpacked with integer ops, following ggml-quants.c's dequantize_row_* (and gguf/dequant_reference.cpp, which
// the tests compare against). For dequant, Q4_0/1, Q5_0/1 and Q8_0 use groups of 256 where
// the row allows (a horizontal sum ends each inner loop); the other K-quants use 32.
#pragma once
#include <cstdint>

#include <tg/ast/kernel_builder.hpp>

#include "llm/gguf/tensor_type.hpp"

namespace tg::model {

// Values per group for rows of `cols` values of `type` (plain floats use 32 when they can).
std::int64_t group_size(gguf::tensor_type type, std::int64_t cols);

// W[row][g * group_size + j] as float32, from buffer `slot` holding rows of `row_bytes`
// bytes. row, g and j are int64 index values.
kvalue dequant(kernel_builder& kb, int slot, gguf::tensor_type type, std::int64_t row_bytes, kvalue row, kvalue g,
               kvalue j);

// The lane form of plain floats (F32, F16, BF16): W[row][g * 32 + j] with g counting
// 32-value groups, for j a vector of lanes (a reduce_as_lanes range plus a constant), so
// consecutive j load as one vector. (Quantized types go through int_form below.)
bool has_lane_dequant(gguf::tensor_type type);
kvalue dequant_lanes(kernel_builder& kb, int slot, gguf::tensor_type type, std::int64_t row_bytes, kvalue row,
                     kvalue g, kvalue j);

// The integer form W = a * q - b of value j (< 32) of 32-value group `sub` of group-block
// `blk`, for matmuls over 8-bit activations. A group-block is int_form_group(type) values:
// 32 for Q8_0, Q4_0/1 and Q5_0/1 (sub unused), a 256-value super-block for Q4_K, Q5_K and
// Q6_K (sub 0..7; as a constant its scale unpacking folds). q is a small int32 (|q| < 256), a a scale
// that may depend on j only through j_pair (the first value of j's pair or quad, the values
// one lane multiplies: j with its lowest 1 or 2 bits cleared, so they never straddle 16), b one per group (none for Q8_0, Q4_0, Q5_0 and Q6_K). For Q8_0 and Q4/Q5_0/1
// a and b are floats. For the K-quants they are the sub-block's integer scale and min
// (int32: 6-bit for Q4_K/Q5_K, int8 for Q6_K), and the super-block's float d and dmin come
// apart as block_a and block_b (W = block_a * a * q - block_b * b): a matmul multiplies
// q * a as integers and converts once per super-block.
struct int_weight {
  kvalue q, a, b;
  kvalue block_a, block_b;
  // unsigned_q Q4_0, Q5_0 and Q6_K: the zero point (8, 16, 32: a uint8 constant), subtracted
  // inside the integer dot, W = a * (q - zero) (Q6_K: block_a * a * (q - zero)).
  kvalue zero;
};
bool has_int_form(gguf::tensor_type type);
std::int64_t int_form_group(gguf::tensor_type type);
// unsigned_q: q as the file's unsigned value, a zero-extended byte (the unsigned side of x86's
// vpdpbusd), with the zero point of Q4_0, Q5_0 and Q6_K apart in `zero`. byte_bits (with
// unsigned_q): Q5_0/Q5_1's fifth bits tested in byte lanes, the form AVX2 computes best; without
// it in 16-bit halves, the form AVX-512 turns into a mask register (x86_bit_masks.hpp).
int_weight int_form(kernel_builder& kb, int slot, gguf::tensor_type type, std::int64_t row_bytes, kvalue row, kvalue blk,
                    kvalue sub, kvalue j, kvalue j_pair, bool unsigned_q = false, bool byte_bits = false);

// Q4_K, Q5_K and Q6_K as unsigned bytes, two sub-blocks at once: value j64 (< 64) of sub-blocks
// 2 * pair and 2 * pair + 1 of super-block `blk` (j64 < 32 the first), with j64_pair the first
// value of j64's quad (what one lane of a 4-byte dot takes). W = block_a * a * (q - zero) -
// block_b * b: q the lane's byte, a its scale (Q4_K/Q5_K: the sub-block's, a select of the
// pair's two; Q6_K: its 16 values'), zero Q6_K's 32 (none for the others), the min b from
// k_int_min (Q4_K/Q5_K). For 512-bit quad dot products (vpdpbusd over 64 bytes) that cover the
// pair: one per 64 values, where one sub-block fills only 256 bits.
struct int_weight_pair {
  kvalue q, a, zero;
  kvalue block_a, block_b;
};
int_weight_pair k_int_form_pair(kernel_builder& kb, int slot, gguf::tensor_type type, std::int64_t row_bytes,
                                kvalue row, kvalue blk, std::int64_t pair, kvalue j64, kvalue j64_pair);
// Q4_K and Q5_K: the integer min of sub-block `sub` (any index value, e.g. one per vector lane)
// of super-block `blk`, as int32.
kvalue k_int_min(kernel_builder& kb, int slot, gguf::tensor_type type, std::int64_t row_bytes, kvalue row, kvalue blk,
                 kvalue sub);

}  // namespace tg::model
