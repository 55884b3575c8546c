// model_config.hpp: the hyperparameters of a Llama-family model, read from GGUF metadata.
#pragma once
#include <cstdint>
#include <string>

namespace tg::gguf {
class file;
}

namespace tg::model {

// Which pairs of a head vector RoPE rotates (ggml/src/ggml-cpu/ggml-cpu.c): NORM rotates (2i, 2i+1), the
// layout llama.cpp's converter keeps for `llama`; NEOX rotates (i, i + n/2), for qwen2/qwen3.
enum class rope_style { norm, neox };

struct model_config {
  std::string arch;  // general.architecture
  std::string name;  // general.name, else general.basename, else the architecture
  std::int64_t dim = 0, n_layer = 0, n_head = 0, n_kv_head = 0, head_dim = 0, ffn = 0, vocab = 0;
  std::int64_t rope_dim = 0, context_length = 0;
  float eps = 1e-5f;
  double rope_theta = 10000.0;
  rope_style rope = rope_style::norm;
  bool qkv_bias = false;  // qwen2: blk.N.attn_{q,k,v}.bias
  bool qk_norm = false;   // qwen3: blk.N.attn_{q,k}_norm.weight
  bool tied_output = false;

  // Reads and checks the keys of gguf-py/gguf/constants.py (Keys); throws usage_error naming what is wrong.
  static model_config from_gguf(const gguf::file& file);
};

}  // namespace tg::model
