// sampler.cpp: filter the candidates, then draw by inverse CDF in token-id order.
#include "llm/sampling/sampler.hpp"

#include <algorithm>

#include "llm/sampling/greedy.hpp"
#include "llm/sampling/no_candidates.hpp"

namespace tg::sampling {

sampler::sampler(const sampling_params& params, std::uint64_t seed) : params_(params), rng_(seed) {
  validate(params_);
}

void sampler::filter(std::span<const float> logits) {
  check_vocabulary_size(logits.size());
  const bool top_k = params_.top_k > 0 && params_.top_k < logits.size();
  const bool any = top_k ? collect_top_k(logits, params_.top_k, candidates_) : collect_candidates(logits, candidates_);
  if (!any) throw_no_candidates("sample", logits.size());
  set_weights(candidates_, params_.temperature);
  keep_min_p(candidates_, params_.min_p);
  keep_top_p(candidates_, params_.top_p);
}

namespace {

// Inverse CDF over candidates already in id order. Going by id (rather than the filters'
// internal order) makes the token a function of the logits and the draw alone.
std::int32_t draw_in_id_order(std::span<const candidate> by_id, double u) {
  double total = 0.0;
  for (const candidate& c : by_id) total += c.weight;
  const double target = u * total;
  double cumulative = 0.0;
  std::int32_t last_positive = by_id.front().id;
  for (const candidate& c : by_id) {
    if (c.weight <= 0.0) continue;
    cumulative += c.weight;
    last_positive = c.id;
    if (cumulative > target) return c.id;
  }
  // Only reached when rounding leaves the running sum at or below the target.
  return last_positive;
}

}  // namespace

std::int32_t sampler::sample(std::span<const float> logits) {
  if (params_.is_greedy()) return sample_greedy(logits);
  filter(logits);
  const double u = rng_.uniform();
  auto by_id = [](const candidate& a, const candidate& b) { return a.id < b.id; };
  // Without top-k or top-p the candidates are still in id order. Few survivors (top-k, a
  // peaked top-p) are sorted; many are put in order through a table by id, cheaper than sorting.
  if (std::is_sorted(candidates_.begin(), candidates_.end(), by_id)) return draw_in_id_order(candidates_, u);
  if (candidates_.size() * 16 <= logits.size()) {
    std::sort(candidates_.begin(), candidates_.end(), by_id);
    return draw_in_id_order(candidates_, u);
  }
  slots_.assign(logits.size(), -1);
  for (std::size_t i = 0; i < candidates_.size(); ++i)
    slots_[static_cast<std::size_t>(candidates_[i].id)] = static_cast<std::int32_t>(i);
  by_id_.clear();
  for (const std::int32_t slot : slots_)
    if (slot >= 0) by_id_.push_back(candidates_[static_cast<std::size_t>(slot)]);
  return draw_in_id_order(by_id_, u);
}

std::vector<double> sampler::distribution(std::span<const float> logits) {
  std::vector<double> p(logits.size(), 0.0);
  if (params_.is_greedy()) {
    p[static_cast<std::size_t>(sample_greedy(logits))] = 1.0;
    return p;
  }
  filter(logits);
  double total = 0.0;
  for (const candidate& c : candidates_) total += c.weight;
  for (const candidate& c : candidates_) p[static_cast<std::size_t>(c.id)] = c.weight / total;
  return p;
}

}  // namespace tg::sampling
