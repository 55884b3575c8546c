// session.hpp: feeding a growing token sequence through a transformer: chunked prefill,
// reuse of the cached prefix, one-token decode steps, and warm-up (tinygrad/llm/model.py: Transformer.generate).
//
//   tg::model::session s(model);
//   std::vector<float> logits = s.prefill(prompt_ids);   // chunks of chunk_size
//   logits = s.decode(next_id);                          // one token at position s.position()
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "llm/model/transformer.hpp"

namespace tg::model {

class session {
 public:
  explicit session(transformer& model) : model_(&model) {}

  // Logits after the last of `tokens`. Tokens whose K/V are already cached (a common prefix
  // with what this session has seen, excluding the last token, which is always recomputed)
  // are skipped; the rest go through in chunks, and only the final chunk runs the head.
  // Throws usage_error when the tokens are empty or do not fit the context.
  std::vector<float> prefill(std::span<const std::int32_t> tokens);

  // Logits after appending one token.
  std::vector<float> decode(std::int32_t token);

  // Tokens whose K/V are in the cache.
  std::int64_t position() const { return std::int64_t(cached_.size()); }
  std::span<const std::int32_t> tokens() const { return cached_; }
  std::int64_t max_context() const { return model_->max_context(); }
  void reset() { cached_.clear(); }

 private:
  transformer* model_;
  std::vector<std::int32_t> cached_;
};

// The chunk sizes a prefill of `tokens` tokens goes through: chunks of `chunk`, except that
// a chunk longer than `tile` that is not a multiple of it is cut to the multiple, the rest
// following as a chunk of its own. The model's matmuls take tokens `tile` at a time
// (transformer::token_tile); a chunk of any other size runs the one-token matmuls for all
// its tokens, so 13 tokens go as 12 and 1, not as 13 one at a time.
std::vector<std::int64_t> prefill_chunks(std::int64_t tokens, std::int64_t chunk, std::int64_t tile);

// Compiles and runs every kernel of both paths before anything is timed: a full-size prefill
// chunk and two decode steps (fewer tokens when the context is shorter). Leaves no state.
void warm_up(transformer& model);

}  // namespace tg::model
