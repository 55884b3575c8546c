// sampler.hpp: picks the next token from logits, reproducibly for a given seed.
//
// Each non-greedy call draws exactly one uniform number, so the same seed and the same
// sequence of logits give the same tokens. Cost per call is O(n) for n logits (top-k: a heap
// of k, O(n log k) at worst); nothing sorts the whole vocabulary, and scratch buffers are
// reused between calls.
//
//   tg::sampling::sampler s({.temperature = 0.8f, .top_k = 40, .top_p = 0.95f}, 1234);
//   std::int32_t next = s.sample(logits);
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "llm/sampling/candidates.hpp"
#include "llm/sampling/sampling_rng.hpp"
#include <tg/llm/sampling.hpp>

namespace tg::sampling {

using llm::sampling_params;
using llm::validate;

class sampler {
 public:
  // Throws usage_error when `params` is out of range (validate).
  sampler(const sampling_params& params, std::uint64_t seed);

  // A token id in [0, logits.size()). NaN and -inf logits are never chosen; if some are +inf,
  // one of those is, uniformly. Throws usage_error when the logits are empty or all NaN/-inf.
  std::int32_t sample(std::span<const float> logits);

  // The probabilities sample() draws from, one per logit (0 for filtered tokens); for greedy
  // parameters, 1 at the argmax. Draws nothing from the random state.
  std::vector<double> distribution(std::span<const float> logits);

  const sampling_params& params() const { return params_; }
  void reseed(std::uint64_t seed) { rng_ = sampling_rng(seed); }

 private:
  // Fills candidates_ with the surviving tokens and their weights.
  void filter(std::span<const float> logits);

  sampling_params params_;
  sampling_rng rng_;
  std::vector<candidate> candidates_;
  std::vector<std::int32_t> slots_;  // token id -> index in candidates_, or -1
  std::vector<candidate> by_id_;     // candidates_ in id order
};

}  // namespace tg::sampling
