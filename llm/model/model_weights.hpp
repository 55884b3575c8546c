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
  // On GPUs (not qwen3's, whose keys are normed apart): the longest run of attn_q, attn_k, attn_v
  // in that order that share a type (all three, q and k, or k and v), stacked in one matrix, so one
  // dispatch computes them (k and v alone are small matvecs that a dispatch's fixed cost
  // dominates); the stacked ones describe their rows and hold no bytes. Their biases likewise.
  struct stacked_projections {
    weight w;
    std::optional<weight> bias;
    int first = 0, count = 0;  // the projections stacked: q 0, k 1, v 2
  };
  std::optional<stacked_projections> stacked;
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
