// tensor_plan.hpp: the tensors of a model, in file order, with shapes, types and contents.
//
// Names are gguf-py/gguf/constants.py's TENSOR_NAMES; the order is the one llama.cpp's converter writes
// (token_embd, rope_freqs, each block, output_norm, output).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "llm/gguf/tensor_type.hpp"
#include "llm/synth/model_spec.hpp"

namespace tg::synth {

// What a tensor's values are: random matrix or bias values, a norm weight, or the fixed Llama 3
// RoPE frequency factors.
enum class tensor_init { normal, norm, rope_freqs };

struct planned_tensor {
  std::string name;
  std::vector<std::uint64_t> ne;  // ne[0] innermost: a matrix is {in, out}
  gguf::tensor_type type;
  tensor_init init;

  std::uint64_t row_length() const { return ne[0]; }
  std::uint64_t row_count() const;
  std::uint64_t size_bytes() const;
};

// Throws usage_error for an invalid spec (validate) or an empty vocabulary.
std::vector<planned_tensor> plan_tensors(const model_spec& spec, std::uint64_t vocab_size);

}  // namespace tg::synth
