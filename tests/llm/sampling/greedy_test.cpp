// greedy_test.cpp: argmax with ties, NaN and infinities.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <tg/core/error.hpp>

#include "llm/sampling/greedy.hpp"

namespace tg::sampling {

namespace {
constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float nan = std::numeric_limits<float>::quiet_NaN();
}  // namespace

TEST_CASE("sample_greedy picks the largest logit") {
  const std::vector<float> logits{0.5f, -1.0f, 3.25f, 3.0f, -7.0f};
  CHECK(sample_greedy(logits) == 2);
  const std::vector<float> one{42.0f};
  CHECK(sample_greedy(one) == 0);
  const std::vector<float> negative{-5.0f, -3.0f, -4.0f};
  CHECK(sample_greedy(negative) == 1);
}

TEST_CASE("sample_greedy breaks ties toward the lowest id") {
  const std::vector<float> logits{1.0f, 2.0f, 0.0f, 2.0f, 2.0f};
  CHECK(sample_greedy(logits) == 1);
}

TEST_CASE("sample_greedy never picks NaN and skips -inf") {
  const std::vector<float> logits{nan, -inf, 0.25f, nan, 0.5f, nan};
  CHECK(sample_greedy(logits) == 4);
  const std::vector<float> only_one{-inf, nan, -100.0f, -inf};
  CHECK(sample_greedy(only_one) == 2);
}

TEST_CASE("sample_greedy lets +inf beat every finite logit") {
  const std::vector<float> logits{1e30f, inf, 5.0f, inf};
  CHECK(sample_greedy(logits) == 1);
}

TEST_CASE("sample_greedy rejects empty logits and logits with nothing to pick") {
  const std::vector<float> empty;
  CHECK_THROWS_WITH_AS(sample_greedy(empty), "sampling: the logits are empty (vocabulary of 0 tokens)", usage_error);
  const std::vector<float> none{-inf, nan, -inf};
  CHECK_THROWS_WITH_AS(sample_greedy(none),
                       "sample_greedy: all 3 logits are NaN or -inf, so no token can be sampled (did the forward "
                       "pass overflow?)",
                       usage_error);
}

}  // namespace tg::sampling
