// random_weights.hpp: what the GPU benches share for their inputs and checks: random values,
// LLM weights of them quantized by llm-synth's quantizer, and a relative error of results.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "llm/gguf/tensor_type.hpp"
#include "llm/synth/quantize.hpp"

namespace tg::bench {

inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// The largest |gpu - cpu| relative to the largest |cpu|.
inline double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0, scale = 1e-30;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, double(std::fabs(got[i] - want[i])));
    scale = std::max(scale, double(std::fabs(want[i])));
  }
  return got.size() == want.size() ? err / scale : INFINITY;
}

// A rows x cols weight of random values in [-1, 1] (row r seeded r + 1), quantized as `type`.
inline std::vector<std::byte> quantized_rows(gguf::tensor_type type, std::int64_t rows, std::int64_t cols) {
  const std::size_t row_bytes = gguf::row_size_bytes(type, std::size_t(cols));
  std::vector<std::byte> bytes(row_bytes * std::size_t(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::vector<float> values = random_floats(std::size_t(cols), std::uint32_t(r + 1));
    synth::quantize_row(type, values.data(), &bytes[row_bytes * std::size_t(r)], std::size_t(cols));
  }
  return bytes;
}

}  // namespace tg::bench
