// fused_layer_kernels_test.cpp: the kernels a GPU's layer fuses to launch fewer dispatches,
// against float64 references on random inputs, on the CPU and on the emulated gfx1100 (its
// interpreter runs the machine code the GPU heuristic's schedule makes): RMSNorm's row scale
// with its rounding's block scales (activation_kernels.hpp: norm_scale_round_kernel), and RoPE
// of queries and keys with the cache stores (attention_kernels.hpp: rope_store_kernel), from
// packed and from stacked projections.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "llm/model/activation_kernels.hpp"
#include "llm/model/attention_kernels.hpp"
#include "llm/model/launch_vars.hpp"
#include <tg/device.hpp>

namespace {

namespace model = tg::model;

std::vector<float> random_values(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

tg::buffer upload(tg::device& dev, const std::vector<float>& v) {
  tg::buffer b = dev.allocate(v.size() * 4);
  b.copy_in(v.data(), v.size() * 4);
  return b;
}

std::vector<float> download(const tg::buffer& b, std::size_t n) {
  std::vector<float> v(n);
  b.copy_out(v.data(), n * 4);
  return v;
}

void check_close(const std::vector<float>& got, const std::vector<double>& want, double tolerance) {
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 3; ++i)
    if (std::fabs(got[i] - want[i]) > tolerance * (1 + std::fabs(want[i]))) {
      ++bad;
      FAIL_CHECK("element " << i << ": " << got[i] << ", want " << want[i]);
    }
  CHECK(bad == 0);
}

const char* const devices[] = {"CPU", "AMD:EMU:gfx11"};

}  // namespace

TEST_CASE("RMSNorm's row scale and its rounding's block scales in one kernel match a float64 reference") {
  for (const char* name : devices)
    for (auto [K, block, T] : {std::array<std::int64_t, 3>{4096, 256, 1}, {2048, 32, 3}, {512, 256, 2}}) {
      CAPTURE(name);
      CAPTURE(K);
      CAPTURE(block);
      tg::device dev(name);
      const auto x = random_values(std::size_t(T * K), 7, 3.0f), w = random_values(std::size_t(K), 8);
      const float eps = 1e-5f;
      tg::buffer xs = dev.allocate(std::size_t(T * K / block) * 4), s = dev.allocate(std::size_t(T) * 4);
      const std::vector<tg::buffer> slots{xs, s, upload(dev, x), upload(dev, w), upload(dev, {eps})};
      dev.launch(model::norm_scale_round_kernel(K, block), slots, std::vector<std::int64_t>{T, 0, 1, 0});
      std::vector<double> want_s, want_xs;
      for (std::int64_t t = 0; t < T; ++t) {
        double squares = 0;
        for (std::int64_t j = 0; j < K; ++j) squares += double(x[std::size_t(t * K + j)]) * x[std::size_t(t * K + j)];
        const double scale = 1 / std::sqrt(squares / double(K) + eps);
        want_s.push_back(scale);
        for (std::int64_t b = 0; b < K / block; ++b) {
          double top = 0;
          for (std::int64_t i = b * block; i < (b + 1) * block; ++i)
            top = std::max(top, std::fabs(double(x[std::size_t(t * K + i)]) * scale * w[std::size_t(i)]));
          want_xs.push_back(top / 127);
        }
      }
      check_close(download(s, std::size_t(T)), want_s, 1e-5);
      check_close(download(xs, want_xs.size()), want_xs, 1e-5);
    }
}

TEST_CASE("RoPE of queries and keys with the cache stores in one kernel matches a float64 reference") {
  const std::int64_t n_head = 8, n_kv = 2, hd = 16, half = hd / 2, T = 3, start = 5, max_context = 12;
  const std::int64_t qw = n_head * hd, kvw = n_kv * hd;
  for (const char* name : devices)
    for (bool stacked : {false, true})
      for (auto style : {model::rope_style::norm, model::rope_style::neox}) {
        CAPTURE(name);
        CAPTURE(stacked);
        tg::device dev(name);
        const model::attention_shape shape{n_head, n_kv, hd, max_context, style, tg::dtype::float32};
        // Stacked: one row of q | k | v per token (layer_weights::stacked); else three buffers.
        const std::int64_t width = qw + 2 * kvw;
        const std::array<model::head_rows, 3> rows =
            stacked ? std::array<model::head_rows, 3>{{{width, 0}, {width, qw}, {width, qw + kvw}}}
                    : std::array<model::head_rows, 3>{};
        const auto all = random_values(std::size_t(T * width), 21), cos = random_values(std::size_t(T * half), 22),
                   sin = random_values(std::size_t(T * half), 23);
        auto part = [&](std::int64_t offset, std::int64_t w) {  // the packed rows of one projection
          std::vector<float> p;
          for (std::int64_t t = 0; t < T; ++t) p.insert(p.end(), all.begin() + t * width + offset, all.begin() + t * width + offset + w);
          return p;
        };
        const std::vector<float> q = part(0, qw), k = part(qw, kvw), v = part(qw + kvw, kvw);
        const std::size_t cache = std::size_t(n_kv * max_context * hd);
        tg::buffer y = dev.allocate(std::size_t(T * qw) * 4), kc = upload(dev, std::vector<float>(cache, -7.0f)),
                   vc = upload(dev, std::vector<float>(cache, -7.0f));
        tg::buffer in = upload(dev, all);
        const std::vector<tg::buffer> slots{y,
                                            kc,
                                            vc,
                                            stacked ? in : upload(dev, q),
                                            stacked ? in : upload(dev, k),
                                            stacked ? in : upload(dev, v),
                                            upload(dev, cos),
                                            upload(dev, sin)};
        dev.launch(model::rope_store_kernel(shape, rows), slots, std::vector<std::int64_t>{T, start, 1, 0});
        // rotate(x, t, d): NORM pairs (2i, 2i+1), NEOX (i, i + half); the first member takes -sin.
        auto rotate = [&](const std::vector<float>& x, std::int64_t heads, std::int64_t t, std::int64_t h, std::int64_t d) {
          const bool neox = style == model::rope_style::neox;
          const std::int64_t i = neox ? d % half : d / 2, partner = neox ? (d + half) % hd : d ^ 1;
          const bool first = neox ? d < half : d % 2 == 0;
          const double a = x[std::size_t((t * heads + h) * hd + d)], b = x[std::size_t((t * heads + h) * hd + partner)];
          return a * cos[std::size_t(t * half + i)] + (first ? -b : b) * sin[std::size_t(t * half + i)];
        };
        std::vector<double> want_y, want_k(cache, -7.0), want_v(cache, -7.0);
        for (std::int64_t t = 0; t < T; ++t)
          for (std::int64_t h = 0; h < n_head; ++h)
            for (std::int64_t d = 0; d < hd; ++d) want_y.push_back(rotate(q, n_head, t, h, d));
        for (std::int64_t h = 0; h < n_kv; ++h)
          for (std::int64_t t = 0; t < T; ++t)
            for (std::int64_t d = 0; d < hd; ++d) {
              const std::size_t at = std::size_t((h * max_context + start + t) * hd + d);
              want_k[at] = rotate(k, n_kv, t, h, d);
              want_v[at] = v[std::size_t((t * n_kv + h) * hd + d)];
            }
        check_close(download(y, want_y.size()), want_y, 1e-5);
        check_close(download(kc, cache), want_k, 1e-5);  // and nothing outside the rows written
        check_close(download(vc, cache), want_v, 1e-5);
      }
}
