// model_presets.hpp: the shapes of published Llama 3 and Qwen models, to synthesize lookalikes.
//
// The dimensions are those of the published configs (config.json of each Hugging Face model); context
// lengths, RoPE theta and RMS epsilon are the families' values from the same configs.
//
//   const tg::synth::model_preset* p = tg::synth::find_preset("qwen3-0.6b");
//   tg::synth::model_spec spec = tg::synth::spec_from_preset(*p);
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "llm/synth/model_spec.hpp"

namespace tg::synth {

struct model_preset {
  std::string_view name;  // "llama3.2-1b", "qwen2.5-0.5b", "qwen3-8b", ...
  architecture arch;
  model_dims dims;
  bool tied_output;
  std::uint64_t vocab_size;  // the real embedding's row count, for padding the vocabulary
};

std::span<const model_preset> model_presets();
const model_preset* find_preset(std::string_view name);  // nullptr when unknown
// default_spec(arch) with the preset's dims, tying and name; Llama presets get rope_freqs.
model_spec spec_from_preset(const model_preset& preset);

}  // namespace tg::synth
