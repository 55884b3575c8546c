// model_spec.hpp: what a synthetic model is: architecture, dimensions, weight format, options.
//
//   tg::synth::model_spec spec = tg::synth::default_spec(tg::synth::architecture::qwen3);
//   spec.dims.n_layer = 2;
//   spec.format = tg::synth::weight_format::q4_k_m;
//   tg::synth::validate(spec);
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace tg::synth {

// The general.architecture values we write (gguf-py/gguf/constants.py: MODEL_ARCH_NAMES).
enum class architecture { llama, qwen2, qwen3 };
std::string_view architecture_name(architecture arch);
architecture parse_architecture(std::string_view name);  // throws usage_error when unknown

// The tensor types of the 2-D weights. The plain formats put every weight matrix in one type,
// as `llama-quantize --pure` does; q4_k_m mixes Q4_K and Q6_K per tensor as llama.cpp's Q4_K_M
// does (type_mix.hpp). 1-D tensors (norms, biases, rope_freqs) are always F32.
enum class weight_format { f32, f16, bf16, q8_0, q4_0, q4_k, q5_k, q6_k, q4_k_m };
std::string_view weight_format_name(weight_format format);     // "F32", "Q4_K_M", ...
weight_format parse_weight_format(std::string_view name);      // case-insensitive
// general.file_type: llama.cpp's llama_ftype for the format. It is informational; pure Q4_K
// and Q5_K files are labelled Q4_K_S (14) and Q5_K_S (16), the nearest llama.cpp names.
std::uint32_t file_type_id(weight_format format);

struct model_dims {
  std::uint32_t n_embd = 256;
  std::uint32_t n_layer = 2;
  std::uint32_t n_head = 4;
  std::uint32_t n_head_kv = 2;
  std::uint32_t n_ff = 512;
  std::uint32_t head_dim = 0;  // 0: n_embd / n_head
  std::uint32_t context_length = 512;
  float rope_theta = 10000.0f;
  float rms_eps = 1e-5f;

  std::uint32_t resolved_head_dim() const { return head_dim != 0 ? head_dim : n_embd / n_head; }
};

struct model_spec {
  architecture arch = architecture::llama;
  std::string name = "synthetic";
  model_dims dims;
  weight_format format = weight_format::f32;
  bool tied_output = true;    // no output.weight: the head reuses token_embd
  bool qkv_bias = false;      // attn_{q,k,v}.bias; qwen2 only, where default_spec turns it on
  bool rope_freqs = false;    // llama only: rope_freqs.weight with Llama 3's factors
  bool random_norms = false;  // norm weights 1 + N(0, norm_std^2) instead of exactly 1
  std::uint64_t seed = 0;
  float weight_std = 0.02f;   // matrices and biases are N(0, weight_std^2)
  float norm_std = 0.1f;
};

// Defaults for an architecture: a tiny shape, and the family's RoPE theta and RMS epsilon
// (Llama 3: 500000 and 1e-5; Qwen: 1000000 and 1e-6), Qwen2's QKV biases, Qwen3's head_dim.
model_spec default_spec(architecture arch);

// Throws usage_error naming the first field that cannot describe a loadable model.
void validate(const model_spec& spec);

}  // namespace tg::synth
