// candidates_test.cpp: each filter against a plain reference that sorts everything.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "llm/sampling/candidates.hpp"

namespace tg::sampling {
namespace {

constexpr float inf = std::numeric_limits<float>::infinity();

std::vector<float> random_logits(std::size_t n, std::uint64_t seed, float scale = 3.0f, bool with_ties = false) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> out(n);
  for (float& x : out) x = with_ties ? std::round(normal(rng)) : normal(rng);
  return out;
}

std::set<std::int32_t> ids_of(const std::vector<candidate>& c) {
  std::set<std::int32_t> ids;
  for (const candidate& x : c) ids.insert(x.id);
  return ids;
}

// Sorted by `better`, then the shortest prefix whose mass reaches p of the total.
std::set<std::int32_t> reference_top_p(std::vector<candidate> c, double p) {
  std::sort(c.begin(), c.end(), better);
  double total = 0.0;
  for (const candidate& x : c) total += x.weight;
  std::set<std::int32_t> ids;
  double sum = 0.0;
  for (const candidate& x : c) {
    ids.insert(x.id);
    sum += x.weight;
    if (sum >= p * total) break;
  }
  return ids;
}

std::vector<candidate> weighted(const std::vector<float>& logits, float temperature) {
  std::vector<candidate> c;
  collect_candidates(logits, c);
  set_weights(c, temperature);
  return c;
}

}  // namespace

TEST_CASE("collect_candidates drops NaN and -inf, and keeps only +inf when there is one") {
  std::vector<candidate> c;
  const std::vector<float> logits{1.0f, NAN, -inf, 2.0f};
  REQUIRE(collect_candidates(logits, c));
  CHECK(ids_of(c) == std::set<std::int32_t>{0, 3});
  const std::vector<float> infinite{1.0f, inf, 3.0f, inf};
  REQUIRE(collect_candidates(infinite, c));
  CHECK(ids_of(c) == std::set<std::int32_t>{1, 3});
  CHECK(c[0].logit == 0.0f);
  const std::vector<float> none{NAN, -inf};
  CHECK_FALSE(collect_candidates(none, c));
}

TEST_CASE("keep_top_k keeps the k largest logits, lower ids first among ties") {
  std::vector<candidate> c;
  const std::vector<float> logits{1.0f, 3.0f, 3.0f, 3.0f, 2.0f};
  collect_candidates(logits, c);
  keep_top_k(c, 2);
  CHECK(ids_of(c) == std::set<std::int32_t>{1, 2});
  collect_candidates(logits, c);
  keep_top_k(c, 0);
  CHECK(c.size() == 5);
  keep_top_k(c, 9);
  CHECK(c.size() == 5);
}

TEST_CASE("collect_top_k keeps the same set as collect_candidates then keep_top_k") {
  std::vector<float> logits = random_logits(5000, 17, 1.0f, true);  // rounded: many ties
  logits[10] = NAN;
  logits[20] = -inf;
  for (const std::uint32_t k : {1u, 2u, 40u, 999u, 4998u}) {
    CAPTURE(k);
    std::vector<candidate> heap, reference;
    REQUIRE(collect_top_k(logits, k, heap));
    collect_candidates(logits, reference);
    keep_top_k(reference, k);
    CHECK(ids_of(heap) == ids_of(reference));
  }
  SUBCASE("with +inf logits only infinities survive, with logit 0") {
    logits[7] = inf;
    logits[3000] = inf;
    std::vector<candidate> c;
    REQUIRE(collect_top_k(logits, 40, c));
    CHECK(ids_of(c) == std::set<std::int32_t>{7, 3000});
    CHECK(c[0].logit == 0.0f);
    REQUIRE(collect_top_k(logits, 1, c));
    CHECK(ids_of(c) == std::set<std::int32_t>{7});
  }
  SUBCASE("nothing to keep") {
    const std::vector<float> none{NAN, -inf};
    std::vector<candidate> c;
    CHECK_FALSE(collect_top_k(none, 3, c));
  }
}

TEST_CASE("keep_top_p selects the same nucleus as sorting the whole vocabulary") {
  for (const std::size_t n : {std::size_t{1}, std::size_t{10}, std::size_t{65}, std::size_t{1000}, std::size_t{20000}}) {
    for (const bool ties : {false, true}) {
      for (const float p : {1e-6f, 0.1f, 0.5f, 0.9f, 0.95f, 0.999f}) {
        CAPTURE(n);
        CAPTURE(ties);
        CAPTURE(p);
        const std::vector<float> logits = random_logits(n, n * 7 + (ties ? 1 : 0), ties ? 1.0f : 3.0f, ties);
        std::vector<candidate> c = weighted(logits, 0.9f);
        const std::set<std::int32_t> expected = reference_top_p(c, p);
        keep_top_p(c, p);
        CHECK(ids_of(c) == expected);
      }
    }
  }
}

TEST_CASE("keep_min_p keeps tokens at least min_p times as likely as the best") {
  const std::vector<float> logits{0.0f, std::log(0.5f), std::log(0.2f), std::log(0.05f)};
  std::vector<candidate> c = weighted(logits, 1.0f);
  keep_min_p(c, 0.1f);
  CHECK(ids_of(c) == std::set<std::int32_t>{0, 1, 2});
  keep_min_p(c, 0.0f);
  CHECK(c.size() == 3);
  keep_min_p(c, 1.0f);
  CHECK(ids_of(c) == std::set<std::int32_t>{0});
}

TEST_CASE("set_weights gives the best candidate weight 1 and divides by the temperature") {
  const std::vector<float> logits{2.0f, 1.0f};
  const std::vector<candidate> c = weighted(logits, 0.5f);
  CHECK(c[0].weight == 1.0);
  CHECK(c[1].weight == doctest::Approx(std::exp(-2.0)));
}

}  // namespace tg::sampling
