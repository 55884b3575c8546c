// bpe_encoder.hpp: byte-level BPE (GPT-2, Llama 3, Qwen): pre-tokenize, then merge by rank.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "llm/tokenizer/pre_tokenizer.hpp"
#include "llm/tokenizer/token_index.hpp"
#include "llm/tokenizer/vocabulary.hpp"

namespace tg::tokenizer {

class bpe_encoder {
 public:
  // Ranks pairs by their position in vocab.merges; a vocabulary without merges ranks each
  // pair by the id of the token it forms (tinygrad's rule, the same order for tiktoken-style
  // vocabularies; tinygrad/llm/cli.py: SimpleTokenizer._encode_word).
  bpe_encoder(const vocabulary& vocab, pre_tokenizer_kind kind);

  // Appends the ids of text, which holds no special tokens (they are split out before).
  void encode(std::string_view text, std::vector<token_id>& out) const;

  // Appends the ids of one pre-tokenized word.
  void encode_word(std::string_view word, std::vector<token_id>& out) const;

  pre_tokenizer_kind kind() const { return pre_.kind(); }

 private:
  struct merge {
    std::int32_t rank;
    token_id result;
  };
  std::optional<merge> find_merge(token_id left, token_id right) const;
  void add_merge(token_id left, token_id right, merge m);
  token_id find_normal(std::string_view text) const;
  void load_merges(const vocabulary& vocab);
  void derive_merges_from_ids(const vocabulary& vocab);

  pre_tokenizer pre_;
  // Llama 3 emits a word that is itself a token as that token before trying merges
  // (Hugging Face's ignore_merges; llama.cpp sets it for the llama3 preset only).
  bool whole_word_first_;
  token_index index_;                       // every token by its stored text
  std::vector<bool> is_normal_;             // by id
  std::array<token_id, 256> byte_tokens_;   // the token of each single byte
  token_id unk_id_;
  std::unordered_map<std::uint64_t, merge> merges_;
};

}  // namespace tg::tokenizer
