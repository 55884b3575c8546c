// quantize.hpp: float rows to GGUF tensor types by round-to-nearest, from the block layouts.
//
// The legacy types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) use the same round-to-nearest as llama.cpp's
// reference quantizer. The K-quants (Q4_K, Q5_K, Q6_K) are round-to-nearest too, which is
// simpler than llama.cpp's search for the best scales and a little less accurate; the blocks are
// valid and dequantize_row (gguf/dequant_reference.hpp) reads them back close to the input.
//
//   std::vector<std::byte> q(tg::gguf::row_size_bytes(tg::gguf::tensor_type::q4_k, row.size()));
//   tg::synth::quantize_row(tg::gguf::tensor_type::q4_k, row.data(), q.data(), row.size());
#pragma once
#include <cstddef>

#include "llm/gguf/tensor_type.hpp"

namespace tg::synth {

// F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K and Q6_K.
bool is_quantizable(gguf::tensor_type type);

// Encodes `n_elements` finite values from `src` into `dst`, which must hold
// row_size_bytes(type, n_elements) bytes. Throws usage_error when `type` is not quantizable or
// `n_elements` is not a whole number of blocks.
void quantize_row(gguf::tensor_type type, const float* src, std::byte* dst, std::size_t n_elements);

}  // namespace tg::synth
