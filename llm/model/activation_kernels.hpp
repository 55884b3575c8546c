// activation_kernels.hpp: activations rounded to 8 bits per block, once per matmul input, so
// quantized matmuls multiply integers (Q8_0 as in ggml/src/ggml-quants.c: quantize_row_q8_0_ref, applied to x).
//
// Row t's block b of `block` values (32, or 256 for K-quant matmuls, as llama.cpp's Q8_K)
// holds q[j] = round(x[b * block + j] / s) with s = max|x over the block| / 127 (0 when the
// block is zero), so |q| <= 127. On the CPU the values are stored as int16 (not int8): the
// matmul's integer dot product sign-extends only the weight side then (pmaddwd). A GPU's take
// them as int8 (`bytes`), the other operand of its 4-byte dot products.
#pragma once
#include <cstdint>

#include <tg/ast/kernel_builder.hpp>

#include "llm/model/launch_vars.hpp"

namespace tg::model {

inline constexpr std::int64_t activation_block = 32;  // the smallest block, and the sums' group

// xs[t][b] = s for t < rows, of x row t + first (first may be -1: none).
// Slots: 0 xs (float32, rows × K / block), 1 x (float32).
ast::kernel activation_scale_kernel(std::int64_t K, launch_var rows, int first, std::int64_t block = activation_block);

// RMSNorm's row scale and the block scales of its output's rounding in one kernel (a GPU's: a
// dispatch fewer for each norm, whose rows it reads once per block): for n = x * s * w with
// s[t] = 1 / sqrt(mean(x[t]^2) + eps), xs[t][b] = max|n over block b| / 127 (the blocks of
// layer_plans.hpp: norm_round_scale_op, given s) and s itself, for the rounding and the float
// readers. Rows: var_tokens. Slots: 0 xs, 1 s (float32 [T]), 2 x, 3 w ([K]), 4 eps (float32 [1]).
ast::kernel norm_scale_round_kernel(std::int64_t K, std::int64_t block);

// xq[t][k] = q. Slots: 0 xq (int16, rows × K; int8 with `bytes`, as a GPU's matmuls read it:
// linear_kernels.hpp, matmul_form::gpu), 1 x (float32), 2 xs (from the kernel above).
ast::kernel activation_quant_kernel(std::int64_t K, launch_var rows, int first, std::int64_t block = activation_block,
                                    bool bytes = false);

// xb[t][k] = xq[t][k] as int8, for matmuls that read the activations as bytes (AVX-512 VNNI
// tiles, matmul_tiles.hpp). Slots: 0 xb (int8, rows x K), 1 xq.
ast::kernel activation_byte_kernel(std::int64_t K, launch_var rows);

// Per 32-value group g of row t, for weights with a per-group offset (Q4_1, Q5_1, Q4_K,
// Q5_K): with 32-value blocks xsum[t][g] = s * sum_j q[j] (float32); with 256-value blocks
// the integer sum_j q[j] (int32), which a K-quant matmul scales once per super-block.
// Slots: 0 xsum (rows × K / 32), 1 xq (int8 with `bytes`), and with 32-value blocks 2 xs.
ast::kernel activation_sum_kernel(std::int64_t K, launch_var rows, std::int64_t block = activation_block,
                                  bool bytes = false);

// Per 8 values h of row t: xsum8[t][h] = 32 * sum_j q[8h + j] as int16 (|.| <= 32 * 8 * 127 =
// 32512), for Q6_K's decode tiles (matmul_tiles.hpp): the zero point 32 of a 16-value group
// times its int8 scale sc is then one pmaddwd of (sc, sc) against the group's two halves,
// sc * 32 (sum of the first 8) + sc * 32 (sum of the last 8). 256-value blocks only.
// Slots: 0 xsum8 (int16, rows x K / 8), 1 xq (int8 with `bytes`).
ast::kernel activation_sum8_kernel(std::int64_t K, launch_var rows, bool bytes = false);

}  // namespace tg::model
