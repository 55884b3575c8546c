// generate.cpp: sample, stream, stop.
#include "cli/generate.hpp"

#include <chrono>

namespace tg::cli {
namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

generation_result generate(model::session& session, const tokenizer::tokenizer& tok, sampling::sampler& sampler,
                           std::span<const std::int32_t> prompt, std::int64_t max_tokens, std::ostream& out,
                           const std::function<void()>& after_prefill) {
  generation_result r;
  const std::int64_t cached_before = session.position();
  auto start = std::chrono::steady_clock::now();
  std::vector<float> logits = session.prefill(prompt);
  r.prefill_seconds = since(start);
  r.prompt_tokens = std::int64_t(prompt.size()) - std::min<std::int64_t>(cached_before, std::int64_t(prompt.size()) - 1);
  if (after_prefill) after_prefill();
  tokenizer::stream_decoder stream(tok);
  start = std::chrono::steady_clock::now();
  while (std::int64_t(r.tokens.size()) < max_tokens) {
    std::int32_t next = sampler.sample(logits);
    if (tok.is_end_of_generation(next)) break;
    r.tokens.push_back(next);
    out << stream.push(next) << std::flush;
    if (session.position() >= session.max_context()) break;
    logits = session.decode(next);
  }
  out << stream.flush() << std::flush;
  r.decode_seconds = since(start);
  return r;
}

}  // namespace tg::cli
