// swiglu_kernel.cpp: silu(gate) * up.
#include "llm/model/swiglu_kernel.hpp"

#include "llm/model/launch_vars.hpp"

namespace tg::model {

ast::kernel swiglu_kernel(std::int64_t width) {
  kernel_builder kb;
  auto t = kb.output_range(kb.variable(var_tokens));
  auto f = kb.output_range(width);
  auto at = t * width + f;
  auto g = kb.load<float>(1, at);
  auto silu = g * kb.unary(ast::op::reciprocal, kb.exp2(g * -1.4426950408889634) + 1.0);
  kb.store(0, at, silu * kb.load<float>(2, at));
  return kb.finish();
}

}  // namespace tg::model
