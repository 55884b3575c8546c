// token_index.hpp: token text -> id, as a flat open-addressing table.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llm/tokenizer/vocabulary.hpp"

namespace tg::tokenizer {

// Built once per vocabulary and probed millions of times per long prompt (every adjacent
// pair in SentencePiece, every merge while loading BPE), so it avoids std::unordered_map's
// node-per-entry pointer chasing: one array of (hash, id) slots plus one pool of the texts.
class token_index {
 public:
  token_index() = default;
  // Ids are positions in `texts`; where two tokens share a text, the lower id wins.
  explicit token_index(const std::vector<std::string>& texts);

  // The id of the token with exactly this text, or no_token.
  token_id find(std::string_view text) const;

 private:
  struct slot {
    std::uint32_t hash;
    token_id id;  // no_token: empty
  };
  static std::uint32_t hash_of(std::string_view text);
  std::string_view text_of(token_id id) const {
    return std::string_view(pool_).substr(offsets_[std::size_t(id)], offsets_[std::size_t(id) + 1] - offsets_[std::size_t(id)]);
  }

  std::vector<slot> slots_;  // size a power of two, at most half full
  std::string pool_;         // all texts, back to back
  std::vector<std::uint32_t> offsets_;
};

inline token_index make_token_index(const vocabulary& vocab) { return token_index(vocab.tokens); }

inline token_id find_token(const token_index& index, std::string_view text) { return index.find(text); }

}  // namespace tg::tokenizer
