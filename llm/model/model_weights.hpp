// model_weights.hpp: every tensor of a Llama/Qwen GGUF file, borrowed onto a device.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "llm/model/model_config.hpp"
#include "llm/model/weight.hpp"

namespace tg::model {

struct layer_weights {
  weight attn_norm, wq, wk, wv, wo, ffn_norm, gate, up, down;
  std::optional<weight> bq, bk, bv;     // qwen2
  std::optional<weight> q_norm, k_norm; // qwen3
  // On GPUs, where attn_k and attn_v share a type (not qwen3's, whose keys are normed apart): both
  // stacked in one matrix, keys' rows first, so one dispatch computes both (each alone is a small
  // matvec that the fixed cost of a dispatch dominates); wk and wv then describe their halves and
  // hold no bytes. bkv: their biases likewise, where the model has them.
  std::optional<weight> wkv, bkv;
};

struct model_weights {
  weight token_embd, output_norm, output;  // output is token_embd's bytes when tied
  std::optional<weight> rope_freqs;        // Llama 3.1/3.2 frequency factors
  std::vector<layer_weights> layers;

  // Bytes of weights one decoded token reads: every matrix and norm once, one embedding row.
  std::uint64_t bytes_per_token() const;
};

model_weights load_model_weights(device& dev, const gguf::file& file, const model_config& c);

}  // namespace tg::model
