// logits_compare.hpp: per-position agreement of two logit tables (cosine, max |diff|, argmax).
#pragma once
#include <cmath>
#include <cstddef>
#include <span>

namespace tg::test {

struct logits_agreement {
  double min_cosine = 1.0, max_abs_diff = 0.0;
  bool same_argmax = true;
};

// argmax_margin: positions whose two largest reference logits are closer than this do not
// count for same_argmax (a rounding within the tolerance may reorder such a near tie).
inline logits_agreement compare_logits(std::span<const float> got, std::span<const float> want, std::size_t vocab,
                                       double argmax_margin = 0.0) {
  logits_agreement a;
  for (std::size_t row = 0; row * vocab < want.size(); ++row) {
    double dot = 0, ng = 0, nw = 0;
    std::size_t best_g = 0, best_w = 0;
    double second_w = -INFINITY;
    for (std::size_t i = 0; i < vocab; ++i) {
      double g = got[row * vocab + i], w = want[row * vocab + i];
      dot += g * w;
      ng += g * g;
      nw += w * w;
      a.max_abs_diff = std::fmax(a.max_abs_diff, std::fabs(g - w));
      if (g > got[row * vocab + best_g]) best_g = i;
      if (i > 0 && w > want[row * vocab + best_w]) second_w = want[row * vocab + best_w], best_w = i;
      else if (i > 0) second_w = std::fmax(second_w, w);
    }
    a.min_cosine = std::fmin(a.min_cosine, dot / std::sqrt(ng * nw));
    const bool clear = double(want[row * vocab + best_w]) - second_w > argmax_margin;
    a.same_argmax = a.same_argmax && (best_g == best_w || !clear);
  }
  return a;
}

}  // namespace tg::test
