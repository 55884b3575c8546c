// type_mix.cpp: per-tensor types (after llama.cpp src/llama-quant.cpp@c392e509: llama_tensor_get_type).
#include "llm/synth/type_mix.hpp"

namespace tg::synth {

using gguf::tensor_type;

bool uses_more_bits(std::uint32_t layer, std::uint32_t n_layer) {
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 ||
         (layer >= n_layer / 8 && (layer - n_layer / 8) % 3 == 2);
}

namespace {

tensor_type q4_k_m_type(weight_role role, bool tied_output, std::uint32_t layer, std::uint32_t n_layer) {
  switch (role) {
    case weight_role::output: return tensor_type::q6_k;
    // Only the embedding that is also the head gets more bits; an untied one stays Q4_K.
    case weight_role::token_embd: return tied_output ? tensor_type::q6_k : tensor_type::q4_k;
    case weight_role::attn_v:
    case weight_role::ffn_down: return uses_more_bits(layer, n_layer) ? tensor_type::q6_k : tensor_type::q4_k;
    default: return tensor_type::q4_k;
  }
}

}  // namespace

tensor_type preferred_weight_type(weight_format format, weight_role role, bool tied_output, std::uint32_t layer,
                                  std::uint32_t n_layer) {
  switch (format) {
    case weight_format::f32: return tensor_type::f32;
    case weight_format::f16: return tensor_type::f16;
    case weight_format::bf16: return tensor_type::bf16;
    case weight_format::q8_0: return tensor_type::q8_0;
    case weight_format::q4_0: return tensor_type::q4_0;
    case weight_format::q4_k: return tensor_type::q4_k;
    case weight_format::q5_k: return tensor_type::q5_k;
    case weight_format::q6_k: return tensor_type::q6_k;
    case weight_format::q4_k_m: return q4_k_m_type(role, tied_output, layer, n_layer);
  }
  TG_UNREACHABLE("weight_format not handled in preferred_weight_type");
}

tensor_type fallback_weight_type(tensor_type type, std::uint64_t row_length) {
  const std::uint32_t block = gguf::traits_of(type).block_elems;
  if (row_length % block == 0) return type;
  tensor_type next = tensor_type::f16;
  switch (type) {
    case tensor_type::q4_k: next = tensor_type::q5_0; break;
    case tensor_type::q5_k: next = tensor_type::q5_1; break;
    case tensor_type::q6_k: next = tensor_type::q8_0; break;
    default: break;
  }
  return row_length % gguf::traits_of(next).block_elems == 0 ? next : tensor_type::f16;
}

tensor_type choose_weight_type(weight_format format, weight_role role, bool tied_output, std::uint32_t layer,
                               std::uint32_t n_layer, std::uint64_t row_length) {
  return fallback_weight_type(preferred_weight_type(format, role, tied_output, layer, n_layer), row_length);
}

}  // namespace tg::synth
