// decode_matvec.hpp: one token through the LLM's decode matmul (linear_kernels.hpp's
// matmul_kernel) on a device, with the activation rounding it takes for 8-bit-activation types,
// as the forward pass launches them, and a full chunk's matmul on a GPU likewise: for tests and
// benches that run them on several devices.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include <tg/device.hpp>

#include "llm/model/activation_kernels.hpp"
#include "llm/model/linear_kernels.hpp"

namespace tg::test {

namespace model = tg::model;

// One token's decode matmul on `dev`, ready to launch: its kernel and its slots (slot 0 the
// output), with the activations already rounded where the type takes 8-bit ones.
struct decode_matvec_setup {
  tg::ast::kernel kernel;
  std::vector<tg::buffer> slots;
};
inline const model::launch_values decode_matvec_vars{1, 0, 1, 0};

// T tokens' activations (K floats each, in xb) rounded to 8 bits on `dev` as the forward pass does
// for w's matmuls (activation_kernels.hpp): values (int16, or int8 where the kernel reads bytes:
// `bytes`), scales, and where the kernel reads them the per-32 sums (`sums`).
struct rounded_activations {
  tg::buffer xq, xs, xsum;
};
inline rounded_activations round_activations(tg::device& dev, const model::weight& w, const tg::buffer& xb, std::int64_t T,
                                             bool bytes, bool sums) {
  const std::int64_t K = w.cols, block = model::activation_block_for(w);
  const model::launch_values vars{T, 0, 1, 0};
  rounded_activations r{dev.allocate(std::size_t(K * T) * (bytes ? 1 : 2)), dev.allocate(std::size_t(K / block * T) * 4),
                        dev.allocate(std::size_t(K / model::activation_block * T) * 4)};
  dev.launch(model::activation_scale_kernel(K, model::var_tokens, -1, block), std::vector<tg::buffer>{r.xs, xb}, vars);
  dev.launch(model::activation_quant_kernel(K, model::var_tokens, -1, block, bytes), std::vector<tg::buffer>{r.xq, xb, r.xs},
             vars);
  if (sums) {
    std::vector<tg::buffer> sum_slots{r.xsum, r.xq};
    if (block == model::activation_block) sum_slots.push_back(r.xs);
    dev.launch(model::activation_sum_kernel(K, model::var_tokens, block, bytes), sum_slots, vars);
  }
  return r;
}

// form: the device's (model::matmul_form_for) unless given; a GPU's form takes the activations as int8.
inline decode_matvec_setup prepare_decode_matvec(tg::device& dev, const model::weight& w, const std::vector<float>& x,
                                                 std::optional<model::matmul_form> asked = std::nullopt) {
  const model::matmul_form form = asked ? *asked : model::matmul_form_for(dev);
  tg::ast::kernel kernel = model::matmul_kernel(w, model::var_tokens, -1, {}, form);
  const std::int64_t K = w.cols, N = w.rows;
  tg::buffer xb = dev.allocate(std::size_t(K) * 4), out = dev.allocate(std::size_t(N) * 4), unused = dev.allocate(std::size_t(N) * 4);
  xb.copy_in(x.data(), x.size() * 4);
  std::vector<tg::buffer> slots{out, w.data, xb, unused, unused};
  if (model::uses_int8_activations(w)) {
    const rounded_activations r =
        round_activations(dev, w, xb, 1, model::reads_activation_bytes(kernel), model::reads_activation_sums(kernel));
    slots = {out, w.data, r.xq, unused, unused, r.xs, r.xsum};
  }
  decode_matvec_setup setup{std::move(kernel), std::move(slots)};
  setup.slots.resize(std::size_t(setup.kernel.slot_count), unused);
  return setup;
}

// out = W x for one token on `dev` (w's bytes on it), the activations rounded first where the
// type takes 8-bit ones.
inline std::vector<float> decode_matvec(tg::device& dev, const model::weight& w, const std::vector<float>& x,
                                        std::optional<model::matmul_form> form = std::nullopt) {
  const decode_matvec_setup setup = prepare_decode_matvec(dev, w, x, form);
  dev.launch(setup.kernel, setup.slots, decode_matvec_vars);
  std::vector<float> got(static_cast<std::size_t>(w.rows));
  setup.slots[0].copy_out(got.data(), got.size() * 4);
  return got;
}

// A full prompt chunk's matmul on `dev` (linear_kernels.hpp: matmul_prefill_kernel with its token
// count fixed at T, in the GPU form), T tokens' activations `x` rounded to int8 there first: its
// kernel and slots (slot 0 the T x rows output), launched with chunk_matmul_vars(T).
struct chunk_matmul_setup {
  tg::ast::kernel kernel;
  std::vector<tg::buffer> slots;
};
inline model::launch_values chunk_matmul_vars(std::int64_t T) { return {T, 0, 1, 0}; }

inline chunk_matmul_setup prepare_chunk_matmul(tg::device& dev, const model::weight& w, const std::vector<float>& x,
                                               std::int64_t T) {
  tg::buffer xb = dev.allocate(x.size() * 4), out = dev.allocate(std::size_t(w.rows * T) * 4);
  xb.copy_in(x.data(), x.size() * 4);
  tg::ast::kernel kernel = model::matmul_prefill_kernel(w, {}, model::matmul_form::gpu, T);
  const rounded_activations r = round_activations(dev, w, xb, T, true, model::reads_activation_sums(kernel));
  chunk_matmul_setup c{std::move(kernel), {out, w.data, r.xq, out, out, r.xs, r.xsum}};
  c.slots.resize(std::size_t(c.kernel.slot_count));
  return c;
}

}  // namespace tg::test
