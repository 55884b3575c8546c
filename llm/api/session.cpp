// session.cpp: tg::llm::session: prefix reuse over the model's one KV cache, sampling, and
// the generation loop with its streaming callback.
#include <tg/llm/session.hpp>

#include <chrono>
#include <optional>

#include "llm/api/model_state.hpp"
#include "llm/model/session.hpp"
#include "llm/sampling/sampler.hpp"

namespace tg::llm {
namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

struct session::state {
  model::state* m;
  std::uint64_t id;
  tg::model::session tokens;
  std::optional<sampling::sampler> sampler;
  sampling_params sampler_params{};
  std::uint64_t sampler_seed = 0;

  explicit state(model::state& owner) : m(&owner), id(owner.next_session++), tokens(owner.net) {}

  // The model has one KV cache: when another session ran since, what this one cached is gone.
  void claim_cache() {
    if (m->cache_owner != id) tokens.reset();
    m->cache_owner = id;
  }

  // The same sampler (and so the same random stream) while the parameters and seed stay.
  sampling::sampler& sampler_for(const generate_options& o) {
    const sampling_params& p = o.sampling;
    bool same = sampler && sampler_seed == o.seed && sampler_params.temperature == p.temperature &&
                sampler_params.top_k == p.top_k && sampler_params.top_p == p.top_p && sampler_params.min_p == p.min_p;
    if (!same) {
      sampler.emplace(p, o.seed);
      sampler_params = p;
      sampler_seed = o.seed;
    }
    return *sampler;
  }
};

session::session(const model& m) : s_(std::make_unique<state>(*m.s_)) {}
session::session(session&&) noexcept = default;
session& session::operator=(session&&) noexcept = default;
session::~session() = default;

std::vector<float> session::prefill(std::span<const token_id> prompt) {
  s_->claim_cache();
  return s_->tokens.prefill(prompt);
}

std::vector<float> session::decode(token_id token) {
  s_->claim_cache();
  return s_->tokens.decode(token);
}

generation_result session::generate(std::span<const token_id> prompt, const generate_options& options,
                                    const token_callback& on_token) {
  if (options.max_tokens < 0) throw usage_error(str("generate: max_tokens ", options.max_tokens, " is negative"));
  sampling::sampler& sampler = s_->sampler_for(options);
  const tokenizer::tokenizer& tok = s_->m->tok;
  generation_result r;
  s_->claim_cache();
  // What prefill will reuse: the common prefix with the cache, never the last prompt token.
  std::span<const token_id> cached = s_->tokens.tokens();
  std::size_t common = 0;
  while (common + 1 < prompt.size() && common < cached.size() && cached[common] == prompt[common]) ++common;
  r.cached_tokens = std::int64_t(common);
  r.prompt_tokens = std::int64_t(prompt.size() - common);
  auto start = std::chrono::steady_clock::now();
  std::vector<float> logits = s_->tokens.prefill(prompt);
  r.prefill_seconds = since(start);
  tokenizer::stream_decoder stream(tok);
  start = std::chrono::steady_clock::now();
  r.stopped = stop_reason::max_tokens;
  while (std::int64_t(r.tokens.size()) < options.max_tokens) {
    token_id next = sampler.sample(logits);
    if (tok.is_end_of_generation(next)) {
      r.stopped = stop_reason::end_of_generation;
      break;
    }
    r.tokens.push_back(next);
    if (on_token && !on_token(next, stream.push(next))) {
      r.stopped = stop_reason::callback;
      break;
    }
    if (position() >= max_context()) {
      r.stopped = stop_reason::context_full;
      break;
    }
    logits = s_->tokens.decode(next);
  }
  if (on_token) {
    std::string rest = stream.flush();
    if (!rest.empty()) on_token(-1, rest);
  }
  r.decode_seconds = since(start);
  return r;
}

std::int64_t session::position() const { return s_->m->cache_owner == s_->id ? s_->tokens.position() : 0; }
std::span<const token_id> session::tokens() const {
  return s_->m->cache_owner == s_->id ? s_->tokens.tokens() : std::span<const token_id>();
}
std::int64_t session::max_context() const { return s_->tokens.max_context(); }
void session::reset() { s_->tokens.reset(); }

}  // namespace tg::llm
