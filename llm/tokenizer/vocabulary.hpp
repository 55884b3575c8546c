// vocabulary.hpp: a tokenizer's data (tokens, scores, merges, special ids), independent of GGUF.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tg::tokenizer {

using token_id = std::int32_t;
inline constexpr token_id no_token = -1;

// GGUF's tokenizer.ggml.token_type values (gguf-py/gguf/constants.py: TokenType).
enum class token_type : std::int32_t {
  undefined = 0,
  normal = 1,
  unknown = 2,
  control = 3,
  user_defined = 4,
  unused = 5,
  byte = 6,
};

// Everything the algorithms need, as a GGUF file (or a test) spells it. Fields left empty or
// unset take the defaults llama.cpp uses for the model and pre-tokenizer (see tokenizer.hpp).
struct vocabulary {
  std::string model = "gpt2";           // "gpt2": byte-level BPE; "llama": SentencePiece
  std::string pre = "default";          // pre-tokenizer preset: "llama-bpe", "qwen2", "gpt-2", ...
  std::vector<std::string> tokens;      // token text by id (byte-level encoded for BPE)
  std::vector<float> scores;            // SentencePiece merge scores; may be empty for BPE
  std::vector<token_type> types;        // empty means every token is normal
  std::vector<std::string> merges;      // BPE "left right" pairs in priority order; may be empty
  std::optional<token_id> bos_id, eos_id, eot_id, eom_id, unk_id, pad_id;
  std::optional<bool> add_bos, add_eos, add_space_prefix;
  std::string chat_template;            // Jinja text from the file, or empty

  token_type type_of(token_id id) const {
    return types.empty() ? token_type::normal : types[static_cast<std::size_t>(id)];
  }
  bool contains(token_id id) const {
    return id >= 0 && static_cast<std::size_t>(id) < tokens.size();
  }
};

}  // namespace tg::tokenizer
