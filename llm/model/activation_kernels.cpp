// activation_kernels.cpp: per-block 8-bit rounding of activations (activation_kernels.hpp).
#include "llm/model/activation_kernels.hpp"

#include <tg/core/error.hpp>

namespace tg::model {
namespace {

kvalue x_row(kernel_builder& kb, kvalue t, int first) { return first >= 0 ? t + kb.variable(first) : t; }

void check_block(std::int64_t K, std::int64_t block) {
  if ((block != 32 && block != 256) || K % block != 0)
    throw usage_error(str("activation kernels: blocks of ", block, " values over rows of ", K,
                          " (blocks are 32 or 256 values and must divide the row)"));
}

}  // namespace

ast::kernel activation_scale_kernel(std::int64_t K, launch_var rows, int first, std::int64_t block) {
  check_block(K, block);
  kernel_builder kb;
  const std::int64_t blocks = K / block;
  auto t = kb.output_range(kb.variable(rows));
  auto b = kb.output_range(blocks);
  auto i = kb.reduce_range(block);
  auto x = kb.load<float>(1, x_row(kb, t, first) * K + b * block + i);
  auto amax = kb.max(kb.maximum(x, -x), i);
  kb.store(0, t * blocks + b, amax * (1.0 / 127.0));
  return kb.finish();
}

ast::kernel norm_scale_round_kernel(std::int64_t K, std::int64_t block) {
  check_block(K, block);
  kernel_builder kb;
  const std::int64_t blocks = K / block;
  auto t = kb.output_range(kb.variable(var_tokens));
  auto b = kb.output_range(blocks);
  auto j = kb.reduce_range(K);
  auto i = kb.reduce_range(block);
  auto xj = kb.load<float>(2, t * K + j);
  // 1 / sqrt(mean(x^2) + eps), as tg::rms_scale (include/tg/dsl/composites.hpp) computes it.
  auto mean = kb.sum(xj * xj, j) * (1.0 / double(K)) + kb.load<float>(4, kb.index(0));
  auto scale = kb.unary(ast::op::reciprocal, kb.unary(ast::op::sqrt, mean));
  auto xw = kb.load<float>(2, t * K + b * block + i) * kb.load<float>(3, b * block + i);
  // max |x s w| = s max |x w|, for s > 0.
  auto amax = kb.max(kb.maximum(xw, -xw), i) * scale;
  kb.store(0, t * blocks + b, amax * (1.0 / 127.0));
  kb.store(1, t, scale);  // once for each block of the row: the same value to the same place
  return kb.finish();
}

ast::kernel activation_quant_kernel(std::int64_t K, launch_var rows, int first, std::int64_t block, bool bytes) {
  check_block(K, block);
  kernel_builder kb;
  const std::int64_t blocks = K / block, groups = block / activation_block;
  auto t = kb.output_range(kb.variable(rows));
  auto b = kb.output_range(blocks);
  auto c = kb.output_range(groups);  // 32-value groups of the block
  auto j = kb.output_range(activation_block);
  auto s = kb.load<float>(2, t * blocks + b);
  auto inv = kb.where(kb.constant(0.0f) < s, kb.unary(ast::op::reciprocal, s), kb.constant(0.0f));
  auto k = b * block + c * activation_block + j;
  auto v = kb.load<float>(1, x_row(kb, t, first) * K + k) * inv;
  auto rounded = kb.cast(dtype::int32, v + kb.where(v < kb.constant(0.0f), kb.constant(-0.5f), kb.constant(0.5f)));
  kb.store(0, t * K + k, kb.cast(bytes ? dtype::int8 : dtype::int16, rounded));
  ast::kernel kernel = kb.finish();
  // One 32-value group per step: the scale loads once, the values as one vector.
  kernel.upcast = {1, 1, 1, int(activation_block)};
  return kernel;
}

ast::kernel activation_byte_kernel(std::int64_t K, launch_var rows) {
  kernel_builder kb;
  auto t = kb.output_range(kb.variable(rows));
  auto k = kb.output_range(K);
  kb.store(0, t * K + k, kb.cast(dtype::int8, kb.load<std::int16_t>(1, t * K + k)));
  return kb.finish();
}

ast::kernel activation_sum_kernel(std::int64_t K, launch_var rows, std::int64_t block, bool bytes) {
  check_block(K, block);
  kernel_builder kb;
  const std::int64_t groups = K / activation_block;
  auto t = kb.output_range(kb.variable(rows));
  auto g = kb.output_range(groups);
  auto j = kb.reduce_range(activation_block);
  auto at = t * K + g * activation_block + j;
  auto sum = kb.sum(kb.cast(dtype::int32, bytes ? kb.load<std::int8_t>(1, at) : kb.load<std::int16_t>(1, at)), j);
  if (block == activation_block) kb.store(0, t * groups + g, kb.cast(dtype::float32, sum) * kb.load<float>(2, t * groups + g));
  else kb.store(0, t * groups + g, sum);
  return kb.finish();
}

ast::kernel activation_sum8_kernel(std::int64_t K, launch_var rows, bool bytes) {
  check_block(K, 256);
  kernel_builder kb;
  auto t = kb.output_range(kb.variable(rows));
  auto h = kb.output_range(K / 8);
  auto j = kb.reduce_range(8);
  auto at = t * K + h * 8 + j;
  auto sum = kb.sum(kb.cast(dtype::int32, bytes ? kb.load<std::int8_t>(1, at) : kb.load<std::int16_t>(1, at)), j);
  kb.store(0, t * (K / 8) + h, kb.cast(dtype::int16, sum * 32));
  return kb.finish();
}

}  // namespace tg::model
