// candidates.hpp: the token filters, each in O(n) on a list of (id, logit, weight) candidates.
//
// The filters keep a prefix of the candidates in `better` order (higher logit first, lower id
// on ties), so their result is a well-defined set even with tied logits. None of them sorts the
// whole vocabulary: top-k uses nth_element, top-p a selection on cumulative mass.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace tg::sampling {

struct candidate {
  std::int32_t id;
  float logit;
  double weight = 0.0;  // exp((logit - max) / temperature): the unnormalized probability
};

// Higher logit first; the lower id first among equal logits.
inline bool better(const candidate& a, const candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// The finite logits as candidates (NaN and -inf are dropped). When some logits are +inf, only
// those are kept, with logit 0, so they are equally likely. Returns false when none is left.
bool collect_candidates(std::span<const float> logits, std::vector<candidate>& out);

// Keeps the `k` best candidates (in no particular order). k = 0 or k >= size: no change.
void keep_top_k(std::vector<candidate>& c, std::uint32_t k);

// collect_candidates followed by keep_top_k(k), in one pass that holds only k candidates: a
// heap of the k best so far, which most logits fail to enter after one comparison, so
// O(n + k log k log(n/k)) in practice and O(n log k) at worst. k must be at least 1.
bool collect_top_k(std::span<const float> logits, std::uint32_t k, std::vector<candidate>& out);

// Sets each weight to exp((logit - max logit) / temperature), so the best weighs 1.
void set_weights(std::vector<candidate>& c, float temperature);

// Keeps candidates whose weight is at least `min_p` (the best's weight is 1). 0: no change.
void keep_min_p(std::vector<candidate>& c, float min_p);

// Keeps the smallest set of best candidates whose weights sum to at least `top_p` of the total.
// 1: no change.
void keep_top_p(std::vector<candidate>& c, float top_p);

}  // namespace tg::sampling
