// tensor_plan.cpp: the tensor list per architecture.
#include "llm/synth/tensor_plan.hpp"

#include <tg/core/error.hpp>

#include "llm/synth/type_mix.hpp"

namespace tg::synth {

using gguf::tensor_type;

std::uint64_t planned_tensor::row_count() const {
  std::uint64_t rows = 1;
  for (std::size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
  return rows;
}

std::uint64_t planned_tensor::size_bytes() const { return gguf::row_size_bytes(type, ne[0]) * row_count(); }

namespace {

class planner {
 public:
  planner(const model_spec& spec, std::vector<planned_tensor>& out) : spec_(spec), out_(out) {}

  // A weight matrix of `rows` outputs over `cols` inputs.
  void matrix(std::string name, weight_role role, std::uint32_t layer, std::uint64_t cols, std::uint64_t rows) {
    const tensor_type type = choose_weight_type(spec_.format, role, spec_.tied_output, layer, spec_.dims.n_layer, cols);
    out_.push_back({std::move(name), {cols, rows}, type, tensor_init::normal});
  }
  void vector(std::string name, std::uint64_t n, tensor_init init) {
    out_.push_back({std::move(name), {n}, tensor_type::f32, init});
  }

 private:
  const model_spec& spec_;
  std::vector<planned_tensor>& out_;
};

std::string block_name(std::uint32_t layer, const char* tensor) {
  return str("blk.", layer, ".", tensor);
}

void plan_block(const model_spec& spec, std::uint32_t i, planner& p) {
  const model_dims& d = spec.dims;
  const std::uint64_t head_dim = d.resolved_head_dim();
  const std::uint64_t q_dim = head_dim * d.n_head, kv_dim = head_dim * d.n_head_kv;
  p.vector(block_name(i, "attn_norm.weight"), d.n_embd, tensor_init::norm);
  p.matrix(block_name(i, "attn_q.weight"), weight_role::attn_q, i, d.n_embd, q_dim);
  if (spec.qkv_bias) p.vector(block_name(i, "attn_q.bias"), q_dim, tensor_init::normal);
  p.matrix(block_name(i, "attn_k.weight"), weight_role::attn_k, i, d.n_embd, kv_dim);
  if (spec.qkv_bias) p.vector(block_name(i, "attn_k.bias"), kv_dim, tensor_init::normal);
  p.matrix(block_name(i, "attn_v.weight"), weight_role::attn_v, i, d.n_embd, kv_dim);
  if (spec.qkv_bias) p.vector(block_name(i, "attn_v.bias"), kv_dim, tensor_init::normal);
  if (spec.arch == architecture::qwen3) {
    p.vector(block_name(i, "attn_q_norm.weight"), head_dim, tensor_init::norm);
    p.vector(block_name(i, "attn_k_norm.weight"), head_dim, tensor_init::norm);
  }
  p.matrix(block_name(i, "attn_output.weight"), weight_role::attn_output, i, q_dim, d.n_embd);
  p.vector(block_name(i, "ffn_norm.weight"), d.n_embd, tensor_init::norm);
  p.matrix(block_name(i, "ffn_gate.weight"), weight_role::ffn_gate, i, d.n_embd, d.n_ff);
  p.matrix(block_name(i, "ffn_up.weight"), weight_role::ffn_up, i, d.n_embd, d.n_ff);
  p.matrix(block_name(i, "ffn_down.weight"), weight_role::ffn_down, i, d.n_ff, d.n_embd);
}

}  // namespace

std::vector<planned_tensor> plan_tensors(const model_spec& spec, std::uint64_t vocab_size) {
  validate(spec);
  if (vocab_size == 0) throw usage_error("synth: plan_tensors: the vocabulary is empty");
  std::vector<planned_tensor> out;
  planner p(spec, out);
  p.matrix("token_embd.weight", weight_role::token_embd, 0, spec.dims.n_embd, vocab_size);
  if (spec.rope_freqs) p.vector("rope_freqs.weight", spec.dims.resolved_head_dim() / 2, tensor_init::rope_freqs);
  for (std::uint32_t i = 0; i < spec.dims.n_layer; ++i) plan_block(spec, i, p);
  p.vector("output_norm.weight", spec.dims.n_embd, tensor_init::norm);
  if (!spec.tied_output) p.matrix("output.weight", weight_role::output, 0, spec.dims.n_embd, vocab_size);
  return out;
}

}  // namespace tg::synth
