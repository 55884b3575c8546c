// sampling_params.cpp: range checks for sampling parameters.
#include <tg/llm/sampling.hpp>

#include <cmath>

#include <tg/core/error.hpp>

namespace tg::llm {

void validate(const sampling_params& p) {
  if (!std::isfinite(p.temperature) || p.temperature < 0.0f)
    throw usage_error(str("sampling: temperature ", p.temperature, " is not a finite number >= 0 (0 is greedy)"));
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f))
    throw usage_error(str("sampling: top_p ", p.top_p, " is outside (0, 1] (1 turns it off)"));
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f))
    throw usage_error(str("sampling: min_p ", p.min_p, " is outside [0, 1] (0 turns it off)"));
}

}  // namespace tg::llm
