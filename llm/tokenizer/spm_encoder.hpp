// spm_encoder.hpp: SentencePiece tokenization as llama.cpp does it (bigram merges by score).
#pragma once
#include <array>
#include <string_view>
#include <vector>

#include "llm/tokenizer/token_index.hpp"
#include "llm/tokenizer/vocabulary.hpp"

namespace tg::tokenizer {

class spm_encoder {
 public:
  explicit spm_encoder(const vocabulary& vocab);

  // Appends the ids of one text fragment (no special tokens inside). With prefix_space the
  // fragment is read as if it started with a space (llama.cpp's add_space_prefix, src/llama-vocab.cpp).
  void encode(std::string_view fragment, bool prefix_space, std::vector<token_id>& out) const;

 private:
  void merge_and_emit(std::string_view text, std::vector<token_id>& out) const;
  void emit_symbol(std::string_view text, std::vector<token_id>& out) const;

  token_index index_;                     // every token by its text (spaces spelled U+2581)
  std::vector<float> scores_;
  std::array<token_id, 256> byte_tokens_; // <0xNN> tokens, or no_token
  std::array<bool, 256> is_separator_{};  // bytes no multi-byte token contains
  token_id unk_id_;
};

}  // namespace tg::tokenizer
