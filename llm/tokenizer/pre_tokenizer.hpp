// pre_tokenizer.hpp: splits text into words before byte-level BPE, one regex per preset.
#pragma once
#include <memory>
#include <string_view>
#include <vector>

namespace tg::tokenizer {

// The presets we implement (regexes of llama.cpp src/llama-vocab.cpp: llm_tokenizer_bpe). llama3 also serves
// llama-bpe and llama-v3; qwen2 also serves deepseek-r1-qwen.
enum class pre_tokenizer_kind { llama3, qwen2, gpt2 };

// Maps tokenizer.ggml.pre to a preset; throws usage_error for names we do not know.
// "default" (and an empty name) fall back to gpt2, as llama.cpp does for BPE.
pre_tokenizer_kind pre_tokenizer_kind_from_name(std::string_view name);

// A compiled splitter. Thread-safe: split() allocates its own match state.
class pre_tokenizer {
 public:
  explicit pre_tokenizer(pre_tokenizer_kind kind);
  ~pre_tokenizer();
  pre_tokenizer(pre_tokenizer&&) noexcept;
  pre_tokenizer& operator=(pre_tokenizer&&) noexcept;

  pre_tokenizer_kind kind() const { return kind_; }

  // Words in order; their concatenation is the input. Text no rule matches (only bytes that
  // are not valid UTF-8) is kept as words of its own rather than dropped.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  struct compiled;
  pre_tokenizer_kind kind_;
  std::unique_ptr<compiled> code_;
};

}  // namespace tg::tokenizer
