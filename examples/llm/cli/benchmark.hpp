// benchmark.hpp: --benchmark: per-token decode timing in tinygrad's line format
// (tinygrad/llm/cli.py: main), then prefill and decode rates.
#pragma once
#include <ostream>

#include <tg/llm/model.hpp>

namespace tg::model {
class transformer;
}

namespace tg::cli {

// One phase's kernel times (-v), as one log message.
void log_profile(const char* phase, const model::transformer& model);

// Generates `count` tokens greedily from [BOS], one line per token, then times a prefill of
// a synthetic prompt. The model should be warmed up.
void run_benchmark(const llm::model& m, int count, std::ostream& out);

}  // namespace tg::cli
