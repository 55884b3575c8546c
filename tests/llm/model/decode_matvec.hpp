// decode_matvec.hpp: one token through the LLM's decode matmul (linear_kernels.hpp's
// matmul_kernel) on a device, with the activation rounding it takes for 8-bit-activation types,
// as the forward pass launches them: for tests and benches that run it on several devices.
#pragma once
#include <cstdint>
#include <vector>

#include <tg/device.hpp>

#include "llm/model/activation_kernels.hpp"
#include "llm/model/linear_kernels.hpp"

namespace tg::test {

namespace model = tg::model;

// out = W x for one token on `dev` (w's bytes on it), the activations rounded first where the
// type takes 8-bit ones.
inline std::vector<float> decode_matvec(tg::device& dev, const model::weight& w, const std::vector<float>& x) {
  const std::int64_t K = w.cols, N = w.rows;
  const model::launch_values vars{1, 0, 1, 0};
  tg::buffer xb = dev.allocate(std::size_t(K) * 4), out = dev.allocate(std::size_t(N) * 4), unused = dev.allocate(std::size_t(N) * 4);
  xb.copy_in(x.data(), x.size() * 4);
  std::vector<tg::buffer> slots{out, w.data, xb, unused, unused};
  if (model::uses_int8_activations(w)) {
    const std::int64_t block = model::activation_block_for(w);
    tg::buffer xq = dev.allocate(std::size_t(K) * 2), xs = dev.allocate(std::size_t(K / block) * 4);
    tg::buffer xsum = dev.allocate(std::size_t(K / model::activation_block) * 4);
    dev.launch(model::activation_scale_kernel(K, model::var_tokens, -1, block), std::vector<tg::buffer>{xs, xb}, vars);
    dev.launch(model::activation_quant_kernel(K, model::var_tokens, -1, block), std::vector<tg::buffer>{xq, xb, xs}, vars);
    if (model::uses_activation_sums(w)) {
      std::vector<tg::buffer> sum_slots{xsum, xq};
      if (block == model::activation_block) sum_slots.push_back(xs);
      dev.launch(model::activation_sum_kernel(K, model::var_tokens, block), sum_slots, vars);
    }
    slots = {out, w.data, xq, unused, unused, xs, xsum};
  }
  const tg::ast::kernel k = model::matmul_kernel(w, model::var_tokens, -1);
  slots.resize(std::size_t(k.slot_count), unused);
  dev.launch(k, slots, vars);
  std::vector<float> got(static_cast<std::size_t>(N));
  out.copy_out(got.data(), got.size() * 4);
  return got;
}

}  // namespace tg::test
