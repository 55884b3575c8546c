// dequant_reference.hpp: plain scalar dequantization of every supported tensor type.
//
// Written for clarity from the block layouts in ggml/src/ggml-common.h, one block at a time; this
// is the reference that compiled kernels are tested against, not a fast path. It reproduces
// llama.cpp's dequantization bit for bit (tests/llm/gguf checks every type against goldens).
//
//   std::vector<float> row(t.ne[0]);
//   tg::gguf::dequantize_row(t.type, f.tensor_data(t), row.data(), row.size());
#pragma once
#include <cstddef>

#include "llm/gguf/tensor_type.hpp"

namespace tg::gguf {

// Decodes `n_elements` values starting at `src` (which need not be aligned) into `dst`.
// Throws usage_error when `type` is not dequantizable or `n_elements` is not a whole number
// of blocks.
void dequantize_row(tensor_type type, const std::byte* src, float* dst, std::size_t n_elements);

}  // namespace tg::gguf
