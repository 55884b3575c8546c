// quantize.cpp: quantize_row, dispatching each block to its layout's function.
#include "llm/synth/quantize.hpp"

#include <cstring>

#include <tg/core/error.hpp>

#include "llm/synth/float_encode.hpp"
#include "llm/synth/quantize_blocks.hpp"

namespace tg::synth {

namespace {

using gguf::tensor_type;
using block_fn = void (*)(const float* x, std::byte* out);

void encode_f32(const float* x, std::byte* out) { std::memcpy(out, x, sizeof(float)); }
void encode_f16(const float* x, std::byte* out) { blocks::store_u16(out, f32_to_fp16(*x)); }
void encode_bf16(const float* x, std::byte* out) { blocks::store_u16(out, f32_to_bf16(*x)); }

block_fn block_function(tensor_type type) {
  switch (type) {
    case tensor_type::f32: return encode_f32;
    case tensor_type::f16: return encode_f16;
    case tensor_type::bf16: return encode_bf16;
    case tensor_type::q4_0: return blocks::quantize_q4_0;
    case tensor_type::q4_1: return blocks::quantize_q4_1;
    case tensor_type::q5_0: return blocks::quantize_q5_0;
    case tensor_type::q5_1: return blocks::quantize_q5_1;
    case tensor_type::q8_0: return blocks::quantize_q8_0;
    case tensor_type::q4_k: return blocks::quantize_q4_k;
    case tensor_type::q5_k: return blocks::quantize_q5_k;
    case tensor_type::q6_k: return blocks::quantize_q6_k;
    default: return nullptr;
  }
}

}  // namespace

bool is_quantizable(tensor_type type) { return block_function(type) != nullptr; }

void quantize_row(tensor_type type, const float* src, std::byte* dst, std::size_t n_elements) {
  const block_fn fn = block_function(type);
  if (fn == nullptr)
    throw usage_error(str("quantize_row: tensor type ", gguf::tensor_type_name(type),
                          " cannot be written (supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, "
                          "Q4_K, Q5_K, Q6_K)"));
  const auto& traits = gguf::traits_of(type);
  if (n_elements % traits.block_elems != 0)
    throw usage_error(str("quantize_row: a row of ", n_elements, " values is not a whole number of ",
                          traits.block_elems, "-value ", traits.name, " blocks"));
  for (std::size_t b = 0; b < n_elements / traits.block_elems; ++b)
    fn(src + b * traits.block_elems, dst + b * traits.block_bytes);
}

}  // namespace tg::synth
