// sampler_test.cpp: the sampler's distribution, its draws, reproducibility and errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include <tg/core/error.hpp>

#include "llm/sampling/greedy.hpp"
#include "llm/sampling/sampler.hpp"

namespace tg::sampling {
namespace {

constexpr float inf = std::numeric_limits<float>::infinity();

std::vector<float> random_logits(std::size_t n, std::uint64_t seed, float scale = 2.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> out(n);
  for (float& x : out) x = normal(rng);
  return out;
}

// softmax(logits / t) in double, written out directly.
std::vector<double> softmax(const std::vector<float>& logits, double t) {
  const double max = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double total = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) total += p[i] = std::exp((double{logits[i]} - max) / t);
  for (double& x : p) x /= total;
  return p;
}

// Pearson's chi-square of `counts` against `probabilities` over bins with non-zero probability.
double chi_square(const std::vector<int>& counts, const std::vector<double>& probabilities, int draws) {
  double chi = 0.0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (probabilities[i] == 0.0) continue;
    const double expected = probabilities[i] * draws;
    chi += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  return chi;
}

std::vector<int> histogram(sampler& s, const std::vector<float>& logits, int draws) {
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < draws; ++i) ++counts[static_cast<std::size_t>(s.sample(logits))];
  return counts;
}

}  // namespace

TEST_CASE("temperature 0, top_k 1 and a tiny top_p all give the greedy token") {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<float> logits = random_logits(1000, seed);
    const std::int32_t greedy = sample_greedy(logits);
    sampler t0({.temperature = 0.0f}, seed);
    sampler k1({.temperature = 1.5f, .top_k = 1}, seed);
    sampler p0({.temperature = 1.0f, .top_p = 1e-6f}, seed);
    for (int i = 0; i < 5; ++i) {
      CHECK(t0.sample(logits) == greedy);
      CHECK(k1.sample(logits) == greedy);
      CHECK(p0.sample(logits) == greedy);
    }
  }
  SUBCASE("ties resolve to the lowest id in every path") {
    const std::vector<float> tied{0.0f, 5.0f, 5.0f, 1.0f};
    CHECK(sampler({.temperature = 1.0f, .top_k = 1}, 1).sample(tied) == 1);
    CHECK(sampler({.temperature = 1.0f, .top_p = 1e-6f}, 1).sample(tied) == 1);
  }
}

TEST_CASE("the distribution is softmax(logits / T), narrowed by top-k, min-p and top-p") {
  const std::vector<float> logits = random_logits(50, 3);
  SUBCASE("temperature only") {
    const std::vector<double> p = sampler({.temperature = 0.7f}, 0).distribution(logits);
    const std::vector<double> expected = softmax(logits, 0.7f);
    for (std::size_t i = 0; i < p.size(); ++i) CHECK(p[i] == doctest::Approx(expected[i]).epsilon(1e-9));
  }
  SUBCASE("top-k renormalizes over the k most likely") {
    const std::vector<double> p = sampler({.temperature = 1.3f, .top_k = 5}, 0).distribution(logits);
    std::vector<std::size_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return logits[a] > logits[b]; });
    std::vector<double> expected(logits.size(), 0.0);
    auto weight = [&](std::size_t i) { return std::exp((double{logits[i]} - logits[order[0]]) / double{1.3f}); };
    double total = 0.0;
    for (std::size_t i = 0; i < 5; ++i) total += weight(order[i]);
    for (std::size_t i = 0; i < 5; ++i) expected[order[i]] = weight(order[i]) / total;
    for (std::size_t i = 0; i < p.size(); ++i) CHECK(p[i] == doctest::Approx(expected[i]).epsilon(1e-9));
  }
  SUBCASE("top-p keeps the smallest set reaching p") {
    const std::vector<double> full = softmax(logits, 1.0);
    const std::vector<double> p = sampler({.temperature = 1.0f, .top_p = 0.8f}, 0).distribution(logits);
    double kept_mass = 0.0, min_kept = 1.0, max_dropped = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[i] > 0.0) {
        kept_mass += full[i];
        min_kept = std::min(min_kept, full[i]);
      } else {
        max_dropped = std::max(max_dropped, full[i]);
      }
    }
    CHECK(kept_mass >= 0.8);
    CHECK(kept_mass - min_kept < 0.8);  // one fewer would not reach p
    CHECK(max_dropped <= min_kept);
    CHECK(std::accumulate(p.begin(), p.end(), 0.0) == doctest::Approx(1.0));
  }
  SUBCASE("min-p drops tokens far below the best") {
    const std::vector<double> full = softmax(logits, 1.0);
    const double best = *std::max_element(full.begin(), full.end());
    const std::vector<double> p = sampler({.temperature = 1.0f, .min_p = 0.05f}, 0).distribution(logits);
    for (std::size_t i = 0; i < p.size(); ++i) CHECK((p[i] > 0.0) == (full[i] >= 0.05 * best));
  }
}

TEST_CASE("draws follow the distribution (chi-square, 200000 draws)") {
  // Critical values of chi-square at p = 0.001: 7 degrees of freedom 24.32, 3 of them 16.27.
  // The seeds are fixed, so this cannot flake; a wrong distribution gives values in the thousands.
  const std::vector<float> logits{1.0f, 0.5f, -0.3f, 2.0f, 0.0f, -1.0f, 1.5f, 0.2f};
  constexpr int draws = 200000;
  SUBCASE("temperature 0.8") {
    sampler s({.temperature = 0.8f}, 2024);
    const std::vector<int> counts = histogram(s, logits, draws);
    CHECK(chi_square(counts, softmax(logits, 0.8f), draws) < 24.32);
  }
  SUBCASE("temperature 1.7 with top-k 4") {
    sampler s({.temperature = 1.7f, .top_k = 4}, 7);
    const std::vector<int> counts = histogram(s, logits, draws);
    const std::vector<double> p = s.distribution(logits);
    CHECK(std::count_if(p.begin(), p.end(), [](double x) { return x > 0.0; }) == 4);
    for (std::size_t i = 0; i < p.size(); ++i)
      if (p[i] == 0.0) CHECK(counts[i] == 0);
    CHECK(chi_square(counts, p, draws) < 16.27);
  }
  SUBCASE("top-p 0.9 never draws outside the nucleus") {
    sampler s({.temperature = 1.0f, .top_p = 0.9f}, 99);
    const std::vector<int> counts = histogram(s, logits, draws);
    const std::vector<double> p = s.distribution(logits);
    const int kept = static_cast<int>(std::count_if(p.begin(), p.end(), [](double x) { return x > 0.0; }));
    CHECK(kept < 8);
    for (std::size_t i = 0; i < p.size(); ++i)
      if (p[i] == 0.0) CHECK(counts[i] == 0);
    CHECK(chi_square(counts, p, draws) < 24.32);
  }
}

TEST_CASE("the token does not depend on which internal path put the candidates in id order") {
  // top_p 1 leaves candidates in id order; a top_k as large as the vocabulary is skipped; a
  // top_k one short goes through the heap and the slot table. All must draw alike.
  const std::vector<float> logits = random_logits(3000, 8, 0.5f);
  sampler plain({.temperature = 1.0f}, 77), full_k({.temperature = 1.0f, .top_k = 3000}, 77);
  for (int i = 0; i < 500; ++i) CHECK(plain.sample(logits) == full_k.sample(logits));
  std::vector<float> with_floor = logits;
  with_floor.push_back(-1e30f);  // certain to be dropped by top-k 3000 of 3001
  sampler heap_path({.temperature = 1.0f, .top_k = 3000}, 77);
  plain.reseed(77);
  for (int i = 0; i < 500; ++i) CHECK(plain.sample(logits) == heap_path.sample(with_floor));
}

TEST_CASE("the same seed and logits give the same tokens; another seed does not") {
  const sampling_params params{.temperature = 1.0f, .top_k = 50, .top_p = 0.95f};
  sampler a(params, 123), b(params, 123), c(params, 124);
  std::vector<std::int32_t> ta, tb, tc;
  for (std::uint64_t step = 0; step < 300; ++step) {
    const std::vector<float> logits = random_logits(2000, step, 1.0f);
    ta.push_back(a.sample(logits));
    tb.push_back(b.sample(logits));
    tc.push_back(c.sample(logits));
  }
  CHECK(ta == tb);
  CHECK(ta != tc);
  SUBCASE("reseed starts the sequence over") {
    a.reseed(123);
    for (std::uint64_t step = 0; step < 300; ++step) CHECK(a.sample(random_logits(2000, step, 1.0f)) == ta[step]);
  }
}

TEST_CASE("NaN and -inf logits are never sampled; +inf logits share all the probability") {
  std::vector<float> logits(64, 0.0f);
  for (std::size_t i = 0; i < logits.size(); i += 2) logits[i] = std::numeric_limits<float>::quiet_NaN();
  logits[1] = -inf;
  sampler s({.temperature = 2.0f}, 5);
  for (int i = 0; i < 5000; ++i) {
    const std::int32_t t = s.sample(logits);
    REQUIRE(t % 2 == 1);
    REQUIRE(t != 1);
  }
  const std::vector<float> infinite{3.0f, inf, 100.0f, inf};
  const std::vector<int> counts = histogram(s, infinite, 20000);
  CHECK(counts[0] == 0);
  CHECK(counts[2] == 0);
  CHECK(counts[1] == doctest::Approx(10000).epsilon(0.05));
}

TEST_CASE("the sampler rejects bad parameters and logits with nothing to sample") {
  CHECK_THROWS_WITH_AS(sampler({.temperature = -1.0f}, 0),
                       "sampling: temperature -1 is not a finite number >= 0 (0 is greedy)", usage_error);
  CHECK_THROWS_AS(sampler({.temperature = std::numeric_limits<float>::quiet_NaN()}, 0), usage_error);
  CHECK_THROWS_AS(sampler({.temperature = inf}, 0), usage_error);
  CHECK_THROWS_WITH_AS(sampler({.temperature = 1.0f, .top_p = 0.0f}, 0),
                       "sampling: top_p 0 is outside (0, 1] (1 turns it off)", usage_error);
  CHECK_THROWS_AS(sampler({.temperature = 1.0f, .top_p = 1.5f}, 0), usage_error);
  CHECK_THROWS_WITH_AS(sampler({.temperature = 1.0f, .min_p = 2.0f}, 0),
                       "sampling: min_p 2 is outside [0, 1] (0 turns it off)", usage_error);

  sampler s({.temperature = 1.0f}, 0);
  const std::vector<float> none{-inf, -inf, std::numeric_limits<float>::quiet_NaN()};
  CHECK_THROWS_WITH_AS(s.sample(none),
                       "sample: all 3 logits are NaN or -inf, so no token can be sampled (did the forward pass "
                       "overflow?)",
                       usage_error);
  const std::vector<float> empty;
  CHECK_THROWS_WITH_AS(s.sample(empty), "sampling: the logits are empty (vocabulary of 0 tokens)", usage_error);
}

TEST_CASE("a 151936-token vocabulary samples inside its top-k and top-p sets") {
  const std::vector<float> logits = random_logits(151936, 11, 3.0f);
  sampler k({.temperature = 0.8f, .top_k = 40, .top_p = 0.95f}, 1);
  std::vector<std::size_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + 40, order.end(),
                    [&](std::size_t a, std::size_t b) { return logits[a] > logits[b]; });
  const std::set<std::size_t> top40(order.begin(), order.begin() + 40);
  for (int i = 0; i < 200; ++i) CHECK(top40.count(static_cast<std::size_t>(k.sample(logits))) == 1);

  sampler p({.temperature = 1.0f, .top_p = 0.5f}, 2);
  const std::vector<double> dist = p.distribution(logits);
  for (int i = 0; i < 200; ++i) CHECK(dist[static_cast<std::size_t>(p.sample(logits))] > 0.0);
}

}  // namespace tg::sampling
