// attention_test.cpp: the attention kernels (cache write, scores, max, exponentials, sum,
// attend) against a float64 causal softmax attention on random inputs, for several context
// lengths and chunk lengths, GQA ratios, head sizes (vector and scalar paths) and both KV-cache
// element types.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string_view>
#include <vector>

#include <tg/core/dtype.hpp>
#include <tg/device.hpp>

#include "llm/model/attention_kernels.hpp"
#include "llm/model/launch_vars.hpp"

namespace {

using tg::model::attention_shape;
using tg::model::softmax_from;

tg::device& cpu() {
  static tg::device d("CPU");
  return d;
}

// The emulated gfx1100 (its interpreter runs the generated machine code): the GPU's decode forms.
tg::device& gpu() {
  static tg::device d("AMD:EMU:gfx11");
  return d;
}

tg::buffer upload(tg::device& dev, const std::vector<float>& v) {
  tg::buffer b = dev.allocate(std::max<std::size_t>(v.size(), 1) * 4);
  if (!v.empty()) b.copy_in(v.data(), v.size() * 4);
  return b;
}

std::vector<float> random_floats(std::mt19937& rng, std::size_t n, float scale) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The value the cache holds for x: x itself, or x rounded to float16.
double cached(tg::dtype type, float x) { return type == tg::dtype::float16 ? double(float(tg::half(x))) : double(x); }

// o[t][h][d] for queries q[t][h][d] over positions 0 .. start + t of keys and values
// [position][kv_head][d], with each query head h reading KV head h / (n_head / n_kv_head).
std::vector<double> reference(const attention_shape& s, std::int64_t T, std::int64_t start, const std::vector<float>& q,
                              const std::vector<float>& k, const std::vector<float>& v) {
  const std::int64_t hd = s.head_dim, group = s.n_head / s.n_kv_head;
  std::vector<double> out(std::size_t(T * s.n_head * hd));
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t h = 0; h < s.n_head; ++h) {
      const std::int64_t kvh = h / group, n = start + t + 1;
      auto score = std::vector<double>(std::size_t(n));
      double top = -1e300, total = 0;
      for (std::int64_t c = 0; c < n; ++c) {
        double dot = 0;
        for (std::int64_t d = 0; d < hd; ++d)
          dot += double(q[std::size_t((t * s.n_head + h) * hd + d)]) *
                 cached(s.cache, k[std::size_t((c * s.n_kv_head + kvh) * hd + d)]);
        score[std::size_t(c)] = dot / std::sqrt(double(hd));
        top = std::max(top, score[std::size_t(c)]);
      }
      for (double& x : score) total += x = std::exp(x - top);
      for (std::int64_t d = 0; d < hd; ++d) {
        double acc = 0;
        for (std::int64_t c = 0; c < n; ++c)
          acc += score[std::size_t(c)] * cached(s.cache, v[std::size_t((c * s.n_kv_head + kvh) * hd + d)]);
        out[std::size_t((t * s.n_head + h) * hd + d)] = acc / total;
      }
    }
  return out;
}

// Fills the cache as the model does (the positions before `start` one decode step at a time,
// then the queried chunk start .. start + T - 1), runs attention for that chunk and returns
// its output.
// from: which passes run before the weighted sum (attention_kernels.hpp: softmax_from); runs > 0
// (with the probabilities): the weighted sum in that many runs over the context, then joined.
std::vector<float> run_kernels(tg::device& dev, const attention_shape& s, std::int64_t T, std::int64_t start,
                               const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                               softmax_from from, std::int64_t runs = 0) {
  auto upload = [&](const std::vector<float>& x) { return ::upload(dev, x); };
  const std::int64_t kvw = s.n_kv_head * s.head_dim, ctx = start + T;
  const std::size_t cache_bytes = std::size_t(s.n_kv_head * s.max_context * s.head_dim * tg::size_bytes(s.cache));
  tg::buffer k_cache = dev.allocate(cache_bytes), v_cache = dev.allocate(cache_bytes);
  const auto store = tg::model::cache_store_kernel(s);
  for (std::int64_t p = 0; p < ctx;) {
    const std::int64_t n = p < start ? 1 : T;
    const tg::model::launch_values vars{n, p, 1, 0};
    std::vector<float> krows(k.begin() + p * kvw, k.begin() + (p + n) * kvw), vrows(v.begin() + p * kvw, v.begin() + (p + n) * kvw);
    dev.launch(store, std::vector<tg::buffer>{k_cache, upload(krows)}, vars);
    dev.launch(store, std::vector<tg::buffer>{v_cache, upload(vrows)}, vars);
    p += n;
  }
  const tg::model::launch_values vars{T, start, 1, 0};
  tg::buffer scores = upload(std::vector<float>(std::size_t(s.n_head * T * ctx)));
  tg::buffer row_max = upload(std::vector<float>(std::size_t(s.n_head * T)));
  tg::buffer row_sum = upload(std::vector<float>(std::size_t(s.n_head * T)));
  tg::buffer out = upload(std::vector<float>(std::size_t(T * s.n_head * s.head_dim)));
  dev.launch(tg::model::scores_kernel(s), std::vector<tg::buffer>{scores, upload(q), k_cache}, vars);
  if (from == softmax_from::scores) {
    dev.launch(tg::model::attend_kernel(s, from), std::vector<tg::buffer>{out, scores, v_cache}, vars);
  } else {
    dev.launch(tg::model::softmax_max_kernel(s), std::vector<tg::buffer>{row_max, scores}, vars);
    tg::buffer probs = upload(std::vector<float>(std::size_t(s.n_head * T * ctx)));
    dev.launch(tg::model::softmax_exp_kernel(s), std::vector<tg::buffer>{probs, scores, row_max}, vars);
    dev.launch(tg::model::softmax_sum_kernel(s), std::vector<tg::buffer>{row_sum, probs}, vars);
    if (runs == 0) {
      dev.launch(tg::model::attend_kernel(s), std::vector<tg::buffer>{out, probs, v_cache, row_sum}, vars);
    } else {
      // Stale values in the parts: every one must be written.
      tg::buffer parts = upload(std::vector<float>(std::size_t(runs * T * s.n_head * s.head_dim), 1e9f));
      dev.launch(tg::model::attend_runs_kernel(s, runs), std::vector<tg::buffer>{parts, probs, v_cache}, vars);
      dev.launch(tg::model::attend_join_kernel(s, runs), std::vector<tg::buffer>{out, parts, row_sum}, vars);
    }
  }
  std::vector<float> o(std::size_t(T * s.n_head * s.head_dim));
  out.copy_out(o.data(), o.size() * 4);
  return o;
}

void check_attention(std::int64_t n_head, std::int64_t n_kv_head, std::int64_t head_dim, std::int64_t T,
                     std::int64_t start, tg::dtype cache, tg::device& dev = cpu()) {
  const attention_shape s{n_head, n_kv_head, head_dim, start + T + 3, tg::model::rope_style::norm, cache};
  std::mt19937 rng(unsigned(n_head * 131 + head_dim * 7 + T * 3 + start));
  const std::int64_t ctx = start + T, kvw = n_kv_head * head_dim;
  // Keys scaled so that scores spread over several units: the softmax is neither flat nor one-hot.
  auto q = random_floats(rng, std::size_t(T * n_head * head_dim), 1.0f);
  auto k = random_floats(rng, std::size_t(ctx * kvw), 1.5f);
  auto v = random_floats(rng, std::size_t(ctx * kvw), 1.0f);
  const auto want = reference(s, T, start, q, k, v);
  // The two forms, then the probabilities' weighted sum in runs: 8 (a GPU's decode), and 3 (a
  // context that does not divide; at contexts under 3, runs past its end).
  const std::pair<softmax_from, std::int64_t> forms[] = {{softmax_from::probabilities, 0}, {softmax_from::scores, 0},
                                                          {softmax_from::probabilities, 8}, {softmax_from::probabilities, 3}};
  for (auto [from, runs] : forms) {
    const auto got = run_kernels(dev, s, T, start, q, k, v, from, runs);
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
    const int passes = int(from);
    CAPTURE(passes);
    CAPTURE(runs);
    CAPTURE(n_head);
    CAPTURE(n_kv_head);
    CAPTURE(head_dim);
    CAPTURE(T);
    CAPTURE(start);
    const std::string_view cache_name = tg::name(cache);
    CAPTURE(cache_name);
    CHECK(worst < 2e-5);
  }
}

}  // namespace

TEST_CASE("attention over the KV cache matches a float64 softmax attention") {
  for (tg::dtype cache : {tg::dtype::float32, tg::dtype::float16})
    for (auto [n_head, n_kv_head] : {std::pair{4, 4}, std::pair{4, 2}, std::pair{8, 2}, std::pair{6, 1}})
      for (std::int64_t head_dim : {64, 12})
        for (auto [T, start] : {std::pair{1, 0}, std::pair{1, 37}, std::pair{1, 300}, std::pair{3, 0}, std::pair{5, 41}})
          check_attention(n_head, n_kv_head, head_dim, T, start, cache);
}

TEST_CASE("a GPU's decode attention, in one kernel after the scores, in passes and in runs, matches it too") {
  // Each form's schedule comes from the GPU heuristic (the one kernel splits its three walks over
  // the context across a wave, 8 values of d a work-item; the runs take 4 x 4 tiles of heads and
  // d, each walk split over half a wave), so it runs here as machine code.
  for (auto [n_head, n_kv_head] : {std::pair{4, 4}, std::pair{8, 2}})
    for (std::int64_t start : {0, 37, 300}) check_attention(n_head, n_kv_head, 64, 1, start, tg::dtype::float16, gpu());
}
