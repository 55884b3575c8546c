// type_mix.hpp: which tensor type each weight matrix gets, for a weight format.
//
// Follows llama.cpp's llama_tensor_get_type (src/llama-quant.cpp): Q4_K_M is Q4_K with
// Q6_K for the head and for attn_v/ffn_down of the layers use_more_bits picks, and a K-quant
// whose row length is not a multiple of 256 falls back to a 32-block type.
#pragma once
#include <cstdint>

#include "llm/gguf/tensor_type.hpp"
#include "llm/synth/model_spec.hpp"

namespace tg::synth {

enum class weight_role { token_embd, output, attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down };

// True for layers i < n/8, i >= 7n/8, and every third layer between (llama.cpp's use_more_bits).
bool uses_more_bits(std::uint32_t layer, std::uint32_t n_layer);

// The type a format asks for before fallback. `layer` is ignored for token_embd and output;
// `tied_output`: the embedding doubles as the head, and Q4_K_M then stores it in Q6_K.
gguf::tensor_type preferred_weight_type(weight_format format, weight_role role, bool tied_output,
                                        std::uint32_t layer, std::uint32_t n_layer);

// What llama.cpp writes instead when `row_length` is not a whole number of `type`'s blocks:
// Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0 (rows of 32k), and F16 when not even that.
gguf::tensor_type fallback_weight_type(gguf::tensor_type type, std::uint64_t row_length);

// preferred_weight_type followed by fallback_weight_type.
gguf::tensor_type choose_weight_type(weight_format format, weight_role role, bool tied_output, std::uint32_t layer,
                                     std::uint32_t n_layer, std::uint64_t row_length);

}  // namespace tg::synth
