// layer_plans.hpp: the non-matmul math of a layer as tg:: expressions (lowered at compile time
// with the model's dims symbolic), bound to one model's dims: RMSNorm, its fusion into the 8-bit
// rounding of the matmul inputs (activation_kernels.hpp), SwiGLU, and RoPE of the queries.
// Every plan's chunk length is the launch variable var_tokens (launch_vars.hpp).
#pragma once
#include <cstdint>

#include "llm/model/model_config.hpp"
#include "llm/model/plan_op.hpp"

namespace tg::model {

// Inputs x [T][heads][width], eps (float32 [1]) -> out s [T][heads] = 1 / sqrt(mean(x^2) + eps).
plan_op rms_scale_op(device& dev, std::int64_t chunk, std::int64_t heads, std::int64_t width);
// x, s (as above), w [width] -> out [T][heads][width] = x * s * w.
plan_op rms_apply_op(device& dev, std::int64_t chunk, std::int64_t heads, std::int64_t width);

// The 8-bit rounding of RMSNorm's output n = x * s * w (x, s, w as rms_apply_op, heads 1), in
// blocks of `block` (32 or 256) values, without storing n: out xs [T][width / block] (the
// block scales), then out xq (int16 [T][width], given xs; int8 with `bytes`, for a GPU's
// matmuls) as activation_quant_kernel's.
plan_op norm_round_scale_op(device& dev, std::int64_t chunk, std::int64_t width, std::int64_t block);
plan_op norm_round_op(device& dev, std::int64_t chunk, std::int64_t width, std::int64_t block, bool bytes = false);

// g, u [T][width] -> out = silu(g) * u.
plan_op swiglu_op(device& dev, std::int64_t chunk, std::int64_t width);
// Its 8-bit rounding without storing it, as norm_round_*_op's: out xs, then (given xs) out xq as
// int8 (a GPU's matmuls; on the CPU silu's exp in both kernels measured slower than storing it).
plan_op swiglu_round_scale_op(device& dev, std::int64_t chunk, std::int64_t width, std::int64_t block);
plan_op swiglu_round_op(device& dev, std::int64_t chunk, std::int64_t width, std::int64_t block);

// RoPE of x [T][heads][head_dim] in the model's layout, with this chunk's cos and sin rows
// [T][head_dim / 2] -> out [T][heads][head_dim]. normed: x is first RMSNorm'd per head with
// inputs s [T][heads] and w [head_dim] (qwen3's q_norm), in the same kernel.
plan_op rope_op(device& dev, std::int64_t chunk, std::int64_t heads, std::int64_t head_dim, rope_style style, bool normed);

}  // namespace tg::model
