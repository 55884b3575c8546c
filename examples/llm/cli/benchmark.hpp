// benchmark.hpp: --benchmark: per-token decode timing in tinygrad's line format (llm-facts
// §5.2), then prefill and decode rates.
#pragma once
#include <ostream>

#include "model/transformer.hpp"
#include "tokenizer/tokenizer.hpp"

namespace tg::cli {

// Generates `count` tokens greedily from [BOS], one line per token, then times a prefill of
// a synthetic prompt. The model should be warmed up.
void run_benchmark(model::transformer& model, const tokenizer::tokenizer& tok, int count, std::ostream& out);

}  // namespace tg::cli
