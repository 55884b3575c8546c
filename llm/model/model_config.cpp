// model_config.cpp: reading llama/qwen2/qwen3 hyperparameters and checking they fit together.
#include "llm/model/model_config.hpp"

#include <tg/core/error.hpp>

#include "llm/gguf/gguf_file.hpp"

namespace tg::model {

model_config model_config::from_gguf(const gguf::file& f) {
  model_config c;
  c.arch = std::string(f.get_string("general.architecture"));
  if (c.arch != "llama" && c.arch != "qwen2" && c.arch != "qwen3")
    throw usage_error(str(f.name(), ": architecture '", c.arch, "' is not supported (llama, qwen2, qwen3 are)"));
  auto key = [&](const char* k) { return c.arch + "." + k; };
  c.name = std::string(f.find_string("general.name").value_or(f.find_string("general.basename").value_or(c.arch)));
  c.dim = f.get_u32(key("embedding_length"));
  c.n_layer = f.get_u32(key("block_count"));
  c.ffn = f.get_u32(key("feed_forward_length"));
  c.n_head = f.get_u32(key("attention.head_count"));
  c.n_kv_head = f.find_u32(key("attention.head_count_kv")).value_or(std::uint32_t(c.n_head));
  c.eps = f.get_f32(key("attention.layer_norm_rms_epsilon"));
  c.context_length = f.get_u32(key("context_length"));
  c.rope_theta = f.find_f32(key("rope.freq_base")).value_or(10000.0f);
  if (c.n_head <= 0 || c.n_kv_head <= 0 || c.n_head % c.n_kv_head != 0)
    throw usage_error(str(f.name(), ": ", c.n_head, " query heads cannot share ", c.n_kv_head, " KV heads evenly"));
  c.head_dim = f.find_u32(key("attention.key_length")).value_or(std::uint32_t(c.dim / c.n_head));
  c.rope_dim = f.find_u32(key("rope.dimension_count")).value_or(std::uint32_t(c.head_dim));
  if (c.rope_dim % 2 != 0 || c.rope_dim > c.head_dim)
    throw usage_error(str(f.name(), ": rope dimension ", c.rope_dim, " must be even and at most the head size ", c.head_dim));
  c.rope = c.arch == "llama" ? rope_style::norm : rope_style::neox;
  c.qkv_bias = f.find_tensor("blk.0.attn_q.bias") != nullptr;
  c.qk_norm = f.find_tensor("blk.0.attn_q_norm.weight") != nullptr;
  c.tied_output = f.find_tensor("output.weight") == nullptr;
  c.vocab = std::int64_t(f.get_tensor("token_embd.weight").ne[1]);
  if (std::int64_t(f.get_tensor("token_embd.weight").ne[0]) != c.dim)
    throw usage_error(str(f.name(), ": token_embd.weight rows have ", f.get_tensor("token_embd.weight").ne[0],
                          " values, expected the embedding length ", c.dim));
  return c;
}

}  // namespace tg::model
