// generate.hpp: the generation loop of the llm command: prefill, then sample and stream
// tokens until an end token, the token limit or the end of the context.
#pragma once
#include <cstdint>
#include <functional>
#include <ostream>
#include <span>
#include <vector>

#include "model/session.hpp"
#include "sampling/sampler.hpp"
#include "tokenizer/tokenizer.hpp"

namespace tg::cli {

struct generation_result {
  std::vector<std::int32_t> tokens;  // generated, without the end token
  std::int64_t prompt_tokens = 0;    // prompt tokens that went through the model (not cached)
  double prefill_seconds = 0, decode_seconds = 0;
};

// Streams decoded text to `out` as tokens come. `after_prefill`, when given, runs between the
// prompt and the first sampled token (the CLI's -v prints the prefill's kernel times there).
generation_result generate(model::session& session, const tokenizer::tokenizer& tok, sampling::sampler& sampler,
                           std::span<const std::int32_t> prompt, std::int64_t max_tokens, std::ostream& out,
                           const std::function<void()>& after_prefill = {});

}  // namespace tg::cli
