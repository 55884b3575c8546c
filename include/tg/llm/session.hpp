// session.hpp: one conversation's state on a model: the tokens whose keys and values are in
// the KV cache (a new prompt that starts with them reuses them), a sampler, and generation
// with a per-token callback that may stop it.
//
//   tg::llm::session s(m);
//   auto r = s.generate(m.tokenize("Once upon a time"), {.max_tokens = 64},
//                       [](tg::llm::token_id, std::string_view text) { std::cout << text << std::flush; return true; });
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <tg/llm/model.hpp>
#include <tg/llm/sampling.hpp>

namespace tg::llm {

struct generate_options {
  std::int64_t max_tokens = 256;
  sampling_params sampling{};  // greedy by default
  std::uint64_t seed = 0;      // same seed, prompt and parameters: same tokens
};

// Called once per generated token, with the text it completes (only whole UTF-8 characters,
// so it may be empty; the rest comes with later tokens or the final flush, whose token is -1).
// Returning false stops generation after this token.
using token_callback = std::function<bool(token_id token, std::string_view text)>;

enum class stop_reason { end_of_generation, max_tokens, context_full, callback };

struct generation_result {
  std::vector<token_id> tokens;      // generated, without the end token
  std::int64_t prompt_tokens = 0;    // prompt tokens that went through the model
  std::int64_t cached_tokens = 0;    // prompt tokens reused from the KV cache
  double prefill_seconds = 0, decode_seconds = 0;
  stop_reason stopped = stop_reason::max_tokens;
};

class session {
 public:
  // The model must outlive the session. Sessions of one model share its KV cache: use one at
  // a time (a session that finds the cache holding another's tokens recomputes its own).
  explicit session(const model& m);
  session(session&&) noexcept;
  session& operator=(session&&) noexcept;
  ~session();

  // Logits after the last prompt token. Tokens already in the cache (the common prefix with
  // what this session ran, except the last token) are not computed again.
  std::vector<float> prefill(std::span<const token_id> prompt);
  // Logits after appending one token.
  std::vector<float> decode(token_id token);

  // Prefill, then sample and decode until an end-of-generation token, max_tokens, the end of
  // the context, or the callback says stop. Throws usage_error for an empty or too long prompt.
  generation_result generate(std::span<const token_id> prompt, const generate_options& options = {},
                             const token_callback& on_token = {});

  std::int64_t position() const;              // tokens in the cache
  std::span<const token_id> tokens() const;   // which ones
  std::int64_t max_context() const;
  void reset();

  struct state;

 private:
  std::unique_ptr<state> s_;
};

}  // namespace tg::llm
