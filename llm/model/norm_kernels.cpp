// norm_kernels.cpp: RMSNorm scale and apply kernels.
#include "llm/model/norm_kernels.hpp"

#include "llm/model/launch_vars.hpp"

namespace tg::model {

ast::kernel rms_scale_kernel(std::int64_t rows_per_token, std::int64_t width, float eps) {
  kernel_builder kb;
  auto r = kb.output_range(kb.variable(var_tokens) * rows_per_token);
  auto k = kb.reduce_range(width);
  auto x = kb.load<float>(1, r * width + k);
  auto mean = kb.sum(x * x, k) * (1.0 / double(width));
  kb.store(0, r, kb.unary(ast::op::reciprocal, kb.unary(ast::op::sqrt, mean + double(eps))));
  return kb.finish();
}

ast::kernel rms_apply_kernel(std::int64_t rows_per_token, std::int64_t width) {
  kernel_builder kb;
  auto r = kb.output_range(kb.variable(var_tokens) * rows_per_token);
  auto k = kb.output_range(width);
  auto at = r * width + k;
  kb.store(0, at, kb.load<float>(1, at) * kb.load<float>(2, r) * kb.load<float>(3, k));
  return kb.finish();
}

}  // namespace tg::model
