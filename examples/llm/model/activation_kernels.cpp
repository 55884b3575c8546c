// activation_kernels.cpp: per-block 8-bit rounding of activations (activation_kernels.hpp).
#include "model/activation_kernels.hpp"

namespace tg::model {
namespace {

kvalue x_row(kernel_builder& kb, kvalue t, int first) { return first >= 0 ? t + kb.variable(first) : t; }

}  // namespace

ast::kernel activation_scale_kernel(std::int64_t K, launch_var rows, int first) {
  kernel_builder kb;
  const std::int64_t blocks = K / activation_block;
  auto t = kb.output_range(kb.variable(rows));
  auto b = kb.output_range(blocks);
  auto i = kb.reduce_range(activation_block);
  auto x = kb.load<float>(1, x_row(kb, t, first) * K + b * activation_block + i);
  auto amax = kb.max(kb.maximum(x, -x), i);
  kb.store(0, t * blocks + b, amax * (1.0 / 127.0));
  return kb.finish();
}

ast::kernel activation_quant_kernel(std::int64_t K, launch_var rows, int first) {
  kernel_builder kb;
  const std::int64_t blocks = K / activation_block;
  auto t = kb.output_range(kb.variable(rows));
  auto b = kb.output_range(blocks);
  auto j = kb.output_range(activation_block);
  auto s = kb.load<float>(2, t * blocks + b);
  auto inv = kb.where(kb.constant(0.0f) < s, kb.unary(ast::op::reciprocal, s), kb.constant(0.0f));
  auto v = kb.load<float>(1, x_row(kb, t, first) * K + b * activation_block + j) * inv;
  auto rounded = kb.cast(dtype::int32, v + kb.where(v < kb.constant(0.0f), kb.constant(-0.5f), kb.constant(0.5f)));
  kb.store(0, (t * blocks + b) * activation_block + j, kb.cast(dtype::int16, rounded));
  ast::kernel k = kb.finish();
  k.upcast = {1, 1, int(activation_block)};  // one block per step: the scale loads once, the values as one vector
  return k;
}

ast::kernel activation_sum_kernel(std::int64_t K, launch_var rows) {
  kernel_builder kb;
  const std::int64_t blocks = K / activation_block;
  auto t = kb.output_range(kb.variable(rows));
  auto b = kb.output_range(blocks);
  auto j = kb.reduce_range(activation_block);
  auto q = kb.cast(dtype::int32, kb.load<std::int16_t>(1, (t * blocks + b) * activation_block + j));
  kb.store(0, t * blocks + b, kb.cast(dtype::float32, kb.sum(q, j)) * kb.load<float>(2, t * blocks + b));
  return kb.finish();
}

}  // namespace tg::model
