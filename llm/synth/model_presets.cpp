// model_presets.cpp: the preset table (from each model's published config.json on Hugging Face).
#include "llm/synth/model_presets.hpp"

#include <array>

namespace tg::synth {

namespace {

// n_embd, n_layer, n_head, n_head_kv, n_ff, head_dim, context, theta, eps.
constexpr model_dims llama3(std::uint32_t embd, std::uint32_t layers, std::uint32_t heads, std::uint32_t ff,
                            std::uint32_t context) {
  return {embd, layers, heads, 8, ff, 0, context, 500000.0f, 1e-5f};
}
constexpr model_dims qwen25(std::uint32_t embd, std::uint32_t layers, std::uint32_t heads, std::uint32_t kv,
                            std::uint32_t ff) {
  return {embd, layers, heads, kv, ff, 0, 32768, 1000000.0f, 1e-6f};
}
constexpr model_dims qwen3(std::uint32_t embd, std::uint32_t layers, std::uint32_t heads, std::uint32_t ff) {
  return {embd, layers, heads, 8, ff, 128, 40960, 1000000.0f, 1e-6f};
}

constexpr std::uint64_t llama3_vocab = 128256, qwen_vocab = 151936, qwen25_7b_vocab = 152064;

const std::array presets{
    model_preset{"llama3.2-1b", architecture::llama, llama3(2048, 16, 32, 8192, 131072), true, llama3_vocab},
    model_preset{"llama3.2-3b", architecture::llama, llama3(3072, 28, 24, 8192, 131072), true, llama3_vocab},
    model_preset{"llama3.1-8b", architecture::llama, llama3(4096, 32, 32, 14336, 131072), false, llama3_vocab},
    model_preset{"qwen2.5-0.5b", architecture::qwen2, qwen25(896, 24, 14, 2, 4864), true, qwen_vocab},
    model_preset{"qwen2.5-1.5b", architecture::qwen2, qwen25(1536, 28, 12, 2, 8960), true, qwen_vocab},
    model_preset{"qwen2.5-7b", architecture::qwen2, qwen25(3584, 28, 28, 4, 18944), false, qwen25_7b_vocab},
    model_preset{"qwen3-0.6b", architecture::qwen3, qwen3(1024, 28, 16, 3072), true, qwen_vocab},
    model_preset{"qwen3-1.7b", architecture::qwen3, qwen3(2048, 28, 16, 6144), true, qwen_vocab},
    model_preset{"qwen3-4b", architecture::qwen3, qwen3(2560, 36, 32, 9728), true, qwen_vocab},
    model_preset{"qwen3-8b", architecture::qwen3, qwen3(4096, 36, 32, 12288), false, qwen_vocab},
};

}  // namespace

std::span<const model_preset> model_presets() { return presets; }

const model_preset* find_preset(std::string_view name) {
  for (const auto& p : presets)
    if (p.name == name) return &p;
  return nullptr;
}

model_spec spec_from_preset(const model_preset& preset) {
  model_spec spec = default_spec(preset.arch);
  spec.dims = preset.dims;
  spec.tied_output = preset.tied_output;
  spec.rope_freqs = preset.arch == architecture::llama;
  spec.name = std::string("synthetic-") + std::string(preset.name);
  return spec;
}

}  // namespace tg::synth
