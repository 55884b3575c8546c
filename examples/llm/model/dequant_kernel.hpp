// dequant_kernel.hpp: one weight value, decoded from its GGUF block bytes inside a kernel.
//
// A row is split into groups; kernels reduce over groups g and, inside, over the values j of
// a group. Plain floats, Q8_0, Q4_0/Q4_1 and Q5_0/Q5_1 use groups of 256 where the row allows: measured
// on the CPU, the horizontal sum that ends each inner loop made 32-value groups 4x slower for
// F32 and 1.8x for Q8_0 than reloading a block's fp16 scale per value. The K-quants keep
// groups of 32 (one sub-block; two 16-value sub-blocks for Q2_K, Q3_K and Q6_K): their scale
// math per value would cost 2.6x instead. Weights stay in
// their file encoding; every field is loaded as uint8/int8/float16 and unpacked with
// integer ops, following llm-facts §2.3 (and gguf/dequant_reference.cpp, which the tests
// compare against).
#pragma once
#include <cstdint>

#include <tg/ast/kernel_builder.hpp>

#include "gguf/tensor_type.hpp"

namespace tg::model {

// Values per group for rows of `cols` values of `type` (plain floats use 32 when they can).
std::int64_t group_size(gguf::tensor_type type, std::int64_t cols);

// W[row][g * group_size + j] as float32, from buffer `slot` holding rows of `row_bytes`
// bytes. row, g and j are int64 index values.
kvalue dequant(kernel_builder& kb, int slot, gguf::tensor_type type, std::int64_t row_bytes, kvalue row, kvalue g,
               kvalue j);

}  // namespace tg::model
