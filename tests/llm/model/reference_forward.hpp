// reference_forward.hpp: a plain float64 forward pass over a GGUF model, for tests: every
// weight dequantized with gguf::dequantize_row, attention over all earlier positions.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "llm/gguf/gguf_file.hpp"
#include "llm/model/model_config.hpp"

namespace tg::test {

// Logits of every position of `tokens` (T x vocab), starting at position 0.
std::vector<double> reference_logits(const gguf::file& f, const model::model_config& c, std::span<const std::int32_t> tokens);

}  // namespace tg::test
