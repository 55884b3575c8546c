// sampling.hpp: how a token is picked from logits: temperature, top-k, top-p, min-p.
//
// Filters apply to softmax(logits / temperature), in the order top-k, min-p, top-p (the order
// Hugging Face applies them; llama.cpp's default chain applies temperature last instead).
// Temperature 0 or top_k 1 is greedy decoding.
//
//   tg::llm::sampling_params p{.temperature = 0.7f, .top_k = 40, .top_p = 0.95f};
//   tg::llm::validate(p);
#pragma once
#include <cstdint>

namespace tg::llm {

struct sampling_params {
  float temperature = 0.0f;  // 0: greedy (argmax, lowest id on ties)
  std::uint32_t top_k = 0;   // keep the k most likely tokens; 0: off
  float top_p = 1.0f;        // keep the most likely tokens whose mass reaches p; 1: off
  float min_p = 0.0f;        // keep tokens with probability >= min_p * the top one's; 0: off

  bool is_greedy() const { return temperature == 0.0f || top_k == 1; }
};

// Throws usage_error naming the first field out of range: temperature must be finite and
// >= 0, top_p in (0, 1], min_p in [0, 1].
void validate(const sampling_params& params);

}  // namespace tg::llm
