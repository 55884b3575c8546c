// greedy.cpp: one pass, strict comparison so the first maximum wins.
#include "llm/sampling/greedy.hpp"

#include <cmath>
#include <limits>

#include "llm/sampling/no_candidates.hpp"

namespace tg::sampling {

std::int32_t sample_greedy(std::span<const float> logits) {
  check_vocabulary_size(logits.size());
  std::int32_t best = -1;
  float best_logit = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < logits.size(); ++i) {
    // NaN fails the comparison, so it is skipped; -inf never beats the initial -inf.
    if (logits[i] > best_logit) {
      best_logit = logits[i];
      best = static_cast<std::int32_t>(i);
    }
  }
  if (best < 0) throw_no_candidates("sample_greedy", logits.size());
  return best;
}

}  // namespace tg::sampling
