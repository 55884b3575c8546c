// session.cpp: chunked prefill with prefix reuse, decode steps, warm-up.
#include "llm/model/session.hpp"

#include <algorithm>

#include <tg/core/error.hpp>

namespace tg::model {

std::vector<float> session::prefill(std::span<const std::int32_t> tokens) {
  if (tokens.empty()) throw usage_error("session::prefill: no tokens (a prompt needs at least one)");
  if (std::int64_t(tokens.size()) > model_->max_context())
    throw usage_error(str("session::prefill: ", tokens.size(), " tokens do not fit the context of ", model_->max_context()));
  std::size_t start = 0;
  while (start + 1 < tokens.size() && start < cached_.size() && cached_[start] == tokens[start]) ++start;
  cached_.resize(start);
  std::vector<float> logits;
  for (std::int64_t size : prefill_chunks(std::int64_t(tokens.size() - start), model_->chunk_size(), model_->token_tile())) {
    const auto n = std::size_t(size);
    bool last = start + n == tokens.size();
    logits = model_->forward(tokens.subspan(start, n), std::int64_t(start), last ? head::last : head::none);
    cached_.insert(cached_.end(), tokens.begin() + std::ptrdiff_t(start), tokens.begin() + std::ptrdiff_t(start + n));
    start += n;
  }
  return logits;
}

std::vector<std::int64_t> prefill_chunks(std::int64_t tokens, std::int64_t chunk, std::int64_t tile) {
  if (chunk < 1 || tile < 1) throw usage_error(str("prefill_chunks: chunk ", chunk, " and tile ", tile, " must be at least 1"));
  std::vector<std::int64_t> sizes;
  for (std::int64_t left = tokens; left > 0;) {
    std::int64_t n = std::min(chunk, left);
    if (n > tile && n % tile != 0) n -= n % tile;
    sizes.push_back(n);
    left -= n;
  }
  return sizes;
}

std::vector<float> session::decode(std::int32_t token) {
  if (position() >= model_->max_context())
    throw usage_error(str("session::decode: the context of ", model_->max_context(), " tokens is full"));
  std::span<const std::int32_t> one(&token, 1);
  auto logits = model_->forward(one, position(), head::last);
  cached_.push_back(token);
  return logits;
}

void warm_up(transformer& model) {
  const std::int64_t chunk = std::min(model.chunk_size(), std::max<std::int64_t>(model.max_context() - 2, 1));
  std::vector<std::int32_t> tokens(std::size_t(chunk), 0);
  // A chunk without logits first (a long prompt's leading chunks), then one with (its last), so
  // both are compiled and, with graphs, captured; the second overwrites the first's cache rows.
  if (chunk == model.chunk_size()) model.forward(tokens, 0, head::none);
  session s(model);
  s.prefill(tokens);
  for (int i = 0; i < 2 && s.position() < model.max_context(); ++i) s.decode(0);
  model.forward(std::span(tokens).first(1), 0, head::all);  // the all-positions head (dump-logits)
  model.prepare_partial_chunks();  // a prompt's remainder after its full chunks
}

}  // namespace tg::model
