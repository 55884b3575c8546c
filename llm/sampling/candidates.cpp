// candidates.cpp: collection and the top-k, min-p and top-p filters.
#include "llm/sampling/candidates.hpp"

#include <algorithm>
#include <cmath>

namespace tg::sampling {

bool collect_candidates(std::span<const float> logits, std::vector<candidate>& out) {
  out.clear();
  bool any_positive_infinity = false;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float l = logits[i];
    if (std::isnan(l) || l == -INFINITY) continue;
    if (l == INFINITY && !any_positive_infinity) {
      // Against +inf every finite logit has probability 0: start over with the infinities.
      any_positive_infinity = true;
      out.clear();
    }
    if (any_positive_infinity && l != INFINITY) continue;
    out.push_back({static_cast<std::int32_t>(i), any_positive_infinity ? 0.0f : l});
  }
  return !out.empty();
}

bool collect_top_k(std::span<const float> logits, std::uint32_t k, std::vector<candidate>& out) {
  out.clear();
  // With `better` as the heap's order, the front is the worst of the k kept so far.
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float l = logits[i];
    if (std::isnan(l) || l == -INFINITY) continue;
    const candidate c{static_cast<std::int32_t>(i), l};
    if (out.size() < k) {
      out.push_back(c);
      std::push_heap(out.begin(), out.end(), better);
    } else if (better(c, out.front())) {
      std::pop_heap(out.begin(), out.end(), better);
      out.back() = c;
      std::push_heap(out.begin(), out.end(), better);
    }
  }
  // The same rule as collect_candidates: +inf leaves only the infinities, equally likely.
  // They are the best, so the heap holds all of them (or the k with the lowest ids).
  if (std::any_of(out.begin(), out.end(), [](const candidate& c) { return c.logit == INFINITY; })) {
    std::erase_if(out, [](const candidate& c) { return c.logit != INFINITY; });
    for (candidate& c : out) c.logit = 0.0f;
  }
  return !out.empty();
}

void keep_top_k(std::vector<candidate>& c, std::uint32_t k) {
  if (k == 0 || k >= c.size()) return;
  std::nth_element(c.begin(), c.begin() + (k - 1), c.end(), better);
  c.resize(k);
}

void set_weights(std::vector<candidate>& c, float temperature) {
  float max_logit = -INFINITY;
  for (const candidate& x : c) max_logit = std::max(max_logit, x.logit);
  const double t = temperature;
  for (candidate& x : c) x.weight = std::exp((static_cast<double>(x.logit) - max_logit) / t);
}

void keep_min_p(std::vector<candidate>& c, float min_p) {
  if (min_p <= 0.0f) return;
  std::erase_if(c, [&](const candidate& x) { return x.weight < min_p; });
}

namespace {

// Below this many candidates the rest is sorted rather than selected further.
constexpr std::size_t sort_below = 64;

double mass(std::span<const candidate> c) {
  double m = 0.0;
  for (const candidate& x : c) m += x.weight;
  return m;
}

}  // namespace

void keep_top_p(std::vector<candidate>& c, float top_p) {
  if (top_p >= 1.0f || c.size() <= 1) return;
  const double target = top_p * mass(c);
  // Invariant: c[0, lo) are better than c[lo, size), all belong to the nucleus, and weigh
  // `before` < target; the nucleus ends inside (lo, hi]. Halving [lo, hi) with nth_element
  // costs n + n/2 + ... = O(n) in all.
  std::size_t lo = 0, hi = c.size();
  double before = 0.0;
  while (hi - lo > sort_below) {
    const std::size_t mid = lo + (hi - lo) / 2;
    std::nth_element(c.begin() + lo, c.begin() + mid, c.begin() + hi, better);
    const double upper = mass(std::span(c).subspan(lo, mid - lo));
    if (before + upper >= target) {
      hi = mid;
    } else {
      before += upper;
      lo = mid;
    }
  }
  std::sort(c.begin() + lo, c.begin() + hi, better);
  std::size_t end = hi;  // when rounding leaves the sum just short of target, keep everything
  for (std::size_t i = lo; i < hi; ++i) {
    before += c[i].weight;
    if (before >= target) {
      end = i + 1;
      break;
    }
  }
  c.resize(end);
}

}  // namespace tg::sampling
