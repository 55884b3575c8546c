// linear_kernels.hpp: kernels that read weight matrices: the embedding gather and the matmul.
#pragma once
#include <tg/ast/kernel_builder.hpp>

#include "model/launch_vars.hpp"
#include "model/weight.hpp"

namespace tg::model {

// x[t][i] = E[tokens[t]][i] for t < T. Slots: 0 x (float32), 1 E, 2 tokens (int32).
ast::kernel embedding_kernel(const weight& table);

// What a matmul adds to W·x.
struct matmul_epilogue {
  bool bias = false;      // + b[n] (slot 4, float32)
  bool residual = false;  // + r[t][n] (slot 3, float32)
};

// out[t][n] = sum_k W[n][k] * x[t + first][k] for t < rows, with W in its GGUF encoding.
// Slots: 0 out, 1 W, 2 x, then the epilogue's. rows/first are launch variables (first may be
// -1: none).
ast::kernel matmul_kernel(const weight& w, launch_var rows, int first, matmul_epilogue epilogue = {});
// The same matmul for chunks whose token count is a multiple of `token_lanes`: each
// dequantized weight feeds that many token accumulators (scalar lanes; LLVM vectorizes the
// reduce), so prefill dequantizes a weight once per `token_lanes` tokens, not per token.
inline constexpr int prefill_token_lanes = 8;
ast::kernel matmul_prefill_kernel(const weight& w, matmul_epilogue epilogue = {});


}  // namespace tg::model
