// tensor_values.cpp: counter-based normal values, norm weights and RoPE factors.
#include "llm/synth/tensor_values.hpp"

#include <cmath>
#include <numbers>

#include <tg/core/error.hpp>

namespace tg::synth {

namespace {

// splitmix64's output function (Steele, Lea, Flood 2014): a bijective 64-bit mixer, so
// distinct counters give distinct, well-spread outputs.
std::uint64_t mix64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58'476D'1CE4'E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D0'49BB'1331'11EBull;
  return x ^ (x >> 31);
}

constexpr std::uint64_t golden_gamma = 0x9E37'79B9'7F4A'7C15ull;  // 2^64 / phi, splitmix64's step

std::uint64_t draw(std::uint64_t key, std::uint64_t counter) { return mix64(key + counter * golden_gamma); }

// The two normals of pair `p`: u1 in (0, 1] so the logarithm is finite.
void normal_pair(std::uint64_t key, std::uint64_t p, double& z0, double& z1) {
  constexpr double unit = 1.0 / 9007199254740992.0;  // 2^-53
  const double u1 = (static_cast<double>(draw(key, 2 * p) >> 11) + 1.0) * unit;
  const double u2 = static_cast<double>(draw(key, 2 * p + 1) >> 11) * unit;
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * std::numbers::pi * u2;
  z0 = r * std::cos(angle);
  z1 = r * std::sin(angle);
}

}  // namespace

std::uint64_t stream_key(std::uint64_t seed, std::string_view tensor_name) {
  std::uint64_t h = 0xCBF2'9CE4'8422'2325ull;  // FNV-1a 64
  for (const char c : tensor_name) h = (h ^ static_cast<unsigned char>(c)) * 0x0000'0100'0000'01B3ull;
  return mix64(seed ^ mix64(h));
}

void fill_normal(std::uint64_t key, std::uint64_t first, float* out, std::size_t n, float mean, float std) {
  double z[2];
  std::uint64_t cached_pair = ~std::uint64_t{0};
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t index = first + i, pair = index / 2;
    if (pair != cached_pair) {
      normal_pair(key, pair, z[0], z[1]);
      cached_pair = pair;
    }
    out[i] = static_cast<float>(mean + std * z[index % 2]);
  }
}

std::vector<float> llama3_rope_factors(std::uint32_t head_dim, float rope_theta) {
  constexpr double factor = 32.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_context = 8192.0;
  std::vector<float> factors(head_dim / 2);
  for (std::uint32_t i = 0; i < head_dim / 2; ++i) {
    const double freq = 1.0 / std::pow(static_cast<double>(rope_theta), 2.0 * i / head_dim);
    const double wavelength = 2.0 * std::numbers::pi / freq;
    double f = 1.0;
    if (wavelength > original_context / low_freq_factor) {
      f = factor;
    } else if (wavelength >= original_context / high_freq_factor) {
      const double s = (original_context / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor);
      f = 1.0 / ((1.0 - s) / factor + s);
    }
    factors[i] = static_cast<float>(f);
  }
  return factors;
}

void fill_rows(const model_spec& spec, const planned_tensor& t, std::uint64_t first_row, std::uint64_t rows,
               float* out) {
  const std::uint64_t row_length = t.row_length();
  const std::uint64_t first = first_row * row_length, n = rows * row_length;
  switch (t.init) {
    case tensor_init::normal:
      return fill_normal(stream_key(spec.seed, t.name), first, out, n, 0.0f, spec.weight_std);
    case tensor_init::norm:
      if (spec.random_norms) return fill_normal(stream_key(spec.seed, t.name), first, out, n, 1.0f, spec.norm_std);
      for (std::uint64_t i = 0; i < n; ++i) out[i] = 1.0f;
      return;
    case tensor_init::rope_freqs: {
      const std::vector<float> factors = llama3_rope_factors(spec.dims.resolved_head_dim(), spec.dims.rope_theta);
      if (first + n > factors.size())
        throw usage_error(str("synth: fill_rows: ", t.name, " has ", factors.size(), " values, asked for ", first + n));
      for (std::uint64_t i = 0; i < n; ++i) out[i] = factors[first + i];
      return;
    }
  }
  TG_UNREACHABLE("tensor_init not handled in fill_rows");
}

}  // namespace tg::synth
