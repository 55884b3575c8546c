// model_metadata.cpp: general.*, ARCH.* and tokenizer.* keys.
#include "llm/synth/model_metadata.hpp"

#include <string>

#include <tg/core/error.hpp>

namespace tg::synth {

using gguf::meta_value;

namespace {

// The ggml quantization format version of Q4_0 ... Q6_K as written today.
constexpr std::uint32_t quantization_version = 2;

bool is_quantized(weight_format format) {
  return format != weight_format::f32 && format != weight_format::f16 && format != weight_format::bf16;
}

std::string describe(const model_spec& spec) {
  return str("synthetic random-weight model from llm-synth (seed ", spec.seed, ", N(0,", spec.weight_std,
             "^2) matrices, ", spec.random_norms ? str("N(1,", spec.norm_std, "^2)") : std::string("unit"), " norms)");
}

}  // namespace

void add_model_metadata(gguf::writer& w, const model_spec& spec, const vocabulary& vocab) {
  const std::string arch(architecture_name(spec.arch));
  const model_dims& d = spec.dims;
  auto key = [&](const char* suffix) { return arch + "." + suffix; };

  w.add("general.architecture", meta_value::string(arch));
  w.add("general.name", meta_value::string(spec.name));
  w.add("general.description", meta_value::string(describe(spec)));
  w.add(key("context_length"), meta_value::u32(d.context_length));
  w.add(key("embedding_length"), meta_value::u32(d.n_embd));
  w.add(key("block_count"), meta_value::u32(d.n_layer));
  w.add(key("feed_forward_length"), meta_value::u32(d.n_ff));
  w.add(key("attention.head_count"), meta_value::u32(d.n_head));
  w.add(key("attention.head_count_kv"), meta_value::u32(d.n_head_kv));
  w.add(key("rope.freq_base"), meta_value::f32(d.rope_theta));
  w.add(key("attention.layer_norm_rms_epsilon"), meta_value::f32(d.rms_eps));
  // Loaders default the head size to n_embd / n_head; Qwen3 files always state it.
  if (spec.arch == architecture::qwen3 || d.resolved_head_dim() * d.n_head != d.n_embd) {
    w.add(key("attention.key_length"), meta_value::u32(d.resolved_head_dim()));
    w.add(key("attention.value_length"), meta_value::u32(d.resolved_head_dim()));
  }
  w.add(key("rope.dimension_count"), meta_value::u32(d.resolved_head_dim()));
  w.add("general.file_type", meta_value::u32(file_type_id(spec.format)));
  if (is_quantized(spec.format)) w.add("general.quantization_version", meta_value::u32(quantization_version));
  for (const auto& [k, v] : vocab.keys) w.add(k, v);
  w.add(key("vocab_size"), meta_value::u32(static_cast<std::uint32_t>(vocab.token_count)));
}

}  // namespace tg::synth
