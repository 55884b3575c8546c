// model_spec.cpp: names, defaults and validation of model specs.
#include "llm/synth/model_spec.hpp"

#include <array>
#include <cctype>
#include <cmath>

#include <tg/core/error.hpp>

namespace tg::synth {

namespace {

struct format_entry {
  weight_format format;
  std::string_view name;
  std::uint32_t file_type;  // llama.cpp's llama_ftype (src/llama.h)
};

constexpr std::array format_table{
    format_entry{weight_format::f32, "F32", 0},    format_entry{weight_format::f16, "F16", 1},
    format_entry{weight_format::bf16, "BF16", 32}, format_entry{weight_format::q8_0, "Q8_0", 7},
    format_entry{weight_format::q4_0, "Q4_0", 2},  format_entry{weight_format::q4_k, "Q4_K", 14},
    format_entry{weight_format::q5_k, "Q5_K", 16}, format_entry{weight_format::q6_k, "Q6_K", 18},
    format_entry{weight_format::q4_k_m, "Q4_K_M", 15},
};

constexpr std::array<std::pair<architecture, std::string_view>, 3> arch_table{{
    {architecture::llama, "llama"}, {architecture::qwen2, "qwen2"}, {architecture::qwen3, "qwen3"}}};

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

const format_entry& entry_of(weight_format format) {
  for (const auto& e : format_table)
    if (e.format == format) return e;
  TG_UNREACHABLE("weight_format missing from format_table");
}

void require_positive(std::string_view field, std::uint32_t value) {
  if (value == 0) throw usage_error(str("synth: ", field, " is 0; it must be at least 1"));
}

void require_positive_finite(std::string_view field, float value) {
  if (!std::isfinite(value) || value <= 0.0f)
    throw usage_error(str("synth: ", field, " is ", value, "; it must be a positive finite number"));
}

}  // namespace

std::string_view architecture_name(architecture arch) {
  for (const auto& [a, name] : arch_table)
    if (a == arch) return name;
  TG_UNREACHABLE("architecture missing from arch_table");
}

architecture parse_architecture(std::string_view name) {
  for (const auto& [a, n] : arch_table)
    if (n == name) return a;
  throw usage_error(str("synth: unknown architecture '", name, "' (known: llama, qwen2, qwen3)"));
}

std::string_view weight_format_name(weight_format format) { return entry_of(format).name; }

weight_format parse_weight_format(std::string_view name) {
  for (const auto& e : format_table)
    if (equal_ignoring_case(e.name, name)) return e.format;
  throw usage_error(str("synth: unknown weight type '", name,
                        "' (known: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, Q4_K_M)"));
}

std::uint32_t file_type_id(weight_format format) { return entry_of(format).file_type; }

model_spec default_spec(architecture arch) {
  model_spec spec;
  spec.arch = arch;
  switch (arch) {
    case architecture::llama:
      spec.dims.rope_theta = 500000.0f;
      spec.dims.rms_eps = 1e-5f;
      break;
    case architecture::qwen2:
      spec.dims.rope_theta = 1000000.0f;
      spec.dims.rms_eps = 1e-6f;
      spec.qkv_bias = true;
      break;
    case architecture::qwen3:
      spec.dims.rope_theta = 1000000.0f;
      spec.dims.rms_eps = 1e-6f;
      // Qwen3 sets head_dim independently of n_embd / n_head: 128 in every size, so the query
      // width n_head * 128 exceeds n_embd in the small models. The tiny default does the same
      // (4 * 128 = 512 > 256) and keeps every row a whole number of K-quant blocks.
      spec.dims.head_dim = 128;
      break;
  }
  return spec;
}

void validate(const model_spec& spec) {
  const model_dims& d = spec.dims;
  require_positive("n_embd", d.n_embd);
  require_positive("n_layer", d.n_layer);
  require_positive("n_head", d.n_head);
  require_positive("n_head_kv", d.n_head_kv);
  require_positive("n_ff", d.n_ff);
  require_positive("context_length", d.context_length);
  if (d.n_head % d.n_head_kv != 0)
    throw usage_error(str("synth: n_head ", d.n_head, " is not a multiple of n_head_kv ", d.n_head_kv,
                          " (each KV head serves a whole group of query heads)"));
  if (d.head_dim == 0 && d.n_embd % d.n_head != 0)
    throw usage_error(str("synth: n_embd ", d.n_embd, " is not a multiple of n_head ", d.n_head,
                          "; set head_dim explicitly"));
  if (d.resolved_head_dim() % 2 != 0)
    throw usage_error(str("synth: head_dim ", d.resolved_head_dim(), " is odd; RoPE rotates pairs of values"));
  require_positive_finite("rope_theta", d.rope_theta);
  require_positive_finite("rms_eps", d.rms_eps);
  require_positive_finite("weight_std", spec.weight_std);
  if (!std::isfinite(spec.norm_std) || spec.norm_std < 0.0f)
    throw usage_error(str("synth: norm_std is ", spec.norm_std, "; it must be finite and not negative"));
  if (spec.qkv_bias && spec.arch != architecture::qwen2)
    throw usage_error(str("synth: QKV biases are a qwen2 feature; the ", architecture_name(spec.arch),
                          " loader does not read them"));
  if (spec.rope_freqs && spec.arch != architecture::llama)
    throw usage_error(str("synth: rope_freqs.weight is a llama (Llama 3.1+) feature, not ",
                          architecture_name(spec.arch)));
  if (spec.name.empty()) throw usage_error("synth: the model name is empty");
}

}  // namespace tg::synth
