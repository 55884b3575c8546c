// greedy.hpp: argmax over logits, the temperature-0 sampler.
//
//   std::int32_t next = tg::sampling::sample_greedy(logits);
#pragma once
#include <cstdint>
#include <span>

namespace tg::sampling {

// The id of the largest logit; the lowest such id on ties. NaN is never chosen; +inf beats
// every finite value. Throws usage_error when `logits` is empty or every logit is NaN or -inf.
std::int32_t sample_greedy(std::span<const float> logits);

}  // namespace tg::sampling
