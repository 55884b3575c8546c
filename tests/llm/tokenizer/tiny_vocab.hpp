// tiny_vocab.hpp: hand-made vocabularies small enough to reason about in a test.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "llm/tokenizer/byte_level.hpp"
#include "llm/tokenizer/vocabulary.hpp"

namespace tg::tokenizer::test {

// A byte-level BPE vocabulary: ids 0-255 are the single bytes (in byte order), then `words`
// (written as raw text, stored byte-level encoded), then `controls` and `user_defined`.
inline vocabulary tiny_bpe(const std::vector<std::string>& words, const std::vector<std::string>& merges,
                           std::string pre = "gpt-2", const std::vector<std::string>& controls = {},
                           const std::vector<std::string>& user_defined = {}) {
  vocabulary v;
  v.model = "gpt2";
  v.pre = std::move(pre);
  for (int b = 0; b < 256; ++b) v.tokens.push_back(byte_level::encode(std::string(1, char(b))));
  for (const auto& w : words) v.tokens.push_back(byte_level::encode(w));
  v.types.assign(v.tokens.size(), token_type::normal);
  for (const auto& c : controls) {
    v.tokens.push_back(c);
    v.types.push_back(token_type::control);
  }
  for (const auto& u : user_defined) {
    v.tokens.push_back(u);
    v.types.push_back(token_type::user_defined);
  }
  for (const auto& m : merges) {
    const auto space = m.find(' ', 1);  // as the tokenizer reads merges: a leading space is a token
    v.merges.push_back(byte_level::encode(m.substr(0, space)) + " " + byte_level::encode(m.substr(space + 1)));
  }
  return v;
}

// The id tiny_bpe gives to words[i].
constexpr token_id word_id(int i) { return 256 + i; }

// A SentencePiece vocabulary: 0 <unk>, 1 <s>, 2 </s>, 3-258 <0x00>-<0xFF>, then `pieces`
// (spaces written as U+2581) with their scores.
struct scored_piece {
  std::string text;
  float score;
};
inline vocabulary tiny_spm(const std::vector<scored_piece>& pieces) {
  vocabulary v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {token_type::unknown, token_type::control, token_type::control};
  v.scores = {0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    v.tokens.push_back(name);
    v.types.push_back(token_type::byte);
    v.scores.push_back(0);
  }
  for (const auto& p : pieces) {
    v.tokens.push_back(p.text);
    v.types.push_back(token_type::normal);
    v.scores.push_back(p.score);
  }
  return v;
}

constexpr token_id spm_byte(int b) { return 3 + b; }
constexpr token_id spm_piece(int i) { return 259 + i; }

}  // namespace tg::tokenizer::test
