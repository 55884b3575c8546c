// tensor_values.hpp: the float values of a synthetic tensor, reproducible from the seed.
//
// Random values are counter-based: value i of a tensor is a function of (seed, tensor name, i)
// only. So a tensor's values do not depend on the order tensors are written in, on how rows are
// split between threads, or on the weight format: a Q8_0 model is the quantization of the F32
// model with the same seed. (The normals go through std::log, std::cos and std::sin, so files
// are bit-identical between machines that share a libm, not necessarily beyond.)
//
//   std::vector<float> rows(t.row_length() * 4);
//   tg::synth::fill_rows(spec, t, 0, 4, rows.data());  // the first four rows of t
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "llm/synth/model_spec.hpp"
#include "llm/synth/tensor_plan.hpp"

namespace tg::synth {

// The stream a tensor's random values come from.
std::uint64_t stream_key(std::uint64_t seed, std::string_view tensor_name);

// Values `first` .. `first + n - 1` of stream `key`, each N(mean, std^2) (Box-Muller on two
// 53-bit uniforms per pair of values).
void fill_normal(std::uint64_t key, std::uint64_t first, float* out, std::size_t n, float mean, float std);

// Llama 3's RoPE frequency factors (convert_hf_to_gguf.py: LlamaModel; the `llama3` rope_scaling of Llama 3.2:
// factor 32, low_freq_factor 1, high_freq_factor 4, original context 8192), one per rotated pair.
std::vector<float> llama3_rope_factors(std::uint32_t head_dim, float rope_theta);

// Rows `first_row` .. `first_row + rows - 1` of `t` as floats, row after row, into `out`.
void fill_rows(const model_spec& spec, const planned_tensor& t, std::uint64_t first_row, std::uint64_t rows,
               float* out);

}  // namespace tg::synth
