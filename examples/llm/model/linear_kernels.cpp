// linear_kernels.cpp: embedding gather and quantized matmul, dequantizing inside the kernel.
#include "model/linear_kernels.hpp"

#include "model/dequant_kernel.hpp"

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

// Output rows n outermost: the CPU backend splits that loop over threads, and at decode
// (one token) the weight rows are the only parallel work there is.
ast::kernel matmul_kernel(const weight& w, launch_var rows, int first, matmul_epilogue epilogue) {
  kernel_builder kb;
  const std::int64_t gs = group_size(w.type, w.cols), K = w.cols, N = w.rows;
  auto n = kb.output_range(N);
  auto t = kb.output_range(kb.variable(rows));
  // A unit range last keeps the default opts from tiling rows into vector lanes (gathers
  // across weight rows); with one lane LLVM vectorizes the inner reduce over a group instead.
  kb.output_range(1);
  auto g = kb.reduce_range(K / gs);
  auto j = kb.reduce_range(gs);
  auto x_row = first >= 0 ? t + kb.variable(first) : t;
  auto x = kb.load<float>(2, x_row * K + g * gs + j);
  auto inner = kb.sum(dequant(kb, 1, w.type, w.row_bytes, n, g, j) * x, j);
  auto acc = kb.sum(inner, g);
  if (epilogue.bias) acc = acc + kb.load<float>(4, n);
  if (epilogue.residual) acc = acc + kb.load<float>(3, t * N + n);
  kb.store(0, t * N + n, acc);
  return kb.finish();
}

ast::kernel matmul_prefill_kernel(const weight& w, matmul_epilogue epilogue) {
  ast::kernel k = matmul_kernel(w, var_tokens, -1, epilogue);
  k.upcast = {1, prefill_token_lanes, 1};  // rows, tokens, the unit range
  k.vector_lanes = false;
  return k;
}

}  // namespace tg::model
