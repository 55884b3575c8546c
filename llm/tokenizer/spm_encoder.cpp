// spm_encoder.cpp: the bigram priority queue over UTF-8 characters, then byte fallback.
#include "llm/tokenizer/spm_encoder.hpp"

#include <cstdint>
#include <cstdio>
#include <queue>
#include <string>

#include <tg/core/error.hpp>
#include "llm/tokenizer/utf8.hpp"

namespace tg::tokenizer {

namespace {

constexpr std::string_view space_marker = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// A run of the fragment's bytes; merged-away symbols have size 0.
struct symbol {
  std::size_t offset, size;
  int prev, next;
};

// 16 bytes: long prompts are one fragment, so the queue holds about one entry per character.
struct bigram {
  float score;
  std::int32_t left, right;
  std::uint32_t size;  // left.size + right.size when queued; a mismatch means it is stale
};

// Highest score first, then leftmost.
struct worse_bigram {
  bool operator()(const bigram& a, const bigram& b) const {
    return a.score != b.score ? a.score < b.score : a.left > b.left;
  }
};

}  // namespace

spm_encoder::spm_encoder(const vocabulary& vocab)
    : index_(make_token_index(vocab)), scores_(vocab.scores), unk_id_(vocab.unk_id.value_or(no_token)) {
  scores_.resize(vocab.tokens.size(), 0.0f);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    byte_tokens_[b] = find_token(index_, name);
  }
  // An ASCII character that appears only in single-character tokens (Llama 2: newline, which
  // it spells <0x0A>) is a safe place to cut the text. Other bytes belong to longer characters.
  for (int c = 0; c < 0x80; ++c) is_separator_[c] = true;
  for (const std::string& token : vocab.tokens)
    if (token.size() > 1)
      for (const char c : token)
        if (static_cast<unsigned char>(c) < 0x80) is_separator_[static_cast<unsigned char>(c)] = false;
}

void spm_encoder::emit_symbol(std::string_view text, std::vector<token_id>& out) const {
  if (const token_id id = find_token(index_, text); id != no_token) {
    out.push_back(id);
    return;
  }
  for (const char c : text) {
    const token_id byte = byte_tokens_[static_cast<unsigned char>(c)];
    if (byte != no_token) {
      out.push_back(byte);
    } else if (unk_id_ != no_token) {
      out.push_back(unk_id_);
    } else {
      throw usage_error(str("tokenizer: '", text, "' has no token, no byte fallback and no unknown token"));
    }
  }
}

void spm_encoder::encode(std::string_view fragment, bool prefix_space, std::vector<token_id>& out) const {
  std::string text;
  text.reserve(fragment.size() * 3 + 3);
  if (prefix_space) text += space_marker;
  for (const char c : fragment) {
    if (c == ' ')
      text += space_marker;
    else
      text += c;
  }
  // Cut around characters no longer token contains: no merge can cross them, so each piece
  // merges on its own with the same result, and the queue stays small for long prompts.
  std::size_t start = 0;
  for (std::size_t pos = 0; pos < text.size(); ++pos) {
    if (!is_separator_[static_cast<unsigned char>(text[pos])]) continue;
    merge_and_emit(std::string_view(text).substr(start, pos - start), out);
    emit_symbol(std::string_view(text).substr(pos, 1), out);
    start = pos + 1;
  }
  merge_and_emit(std::string_view(text).substr(start), out);
}

void spm_encoder::merge_and_emit(std::string_view text, std::vector<token_id>& out) const {
  if (text.empty()) return;
  std::vector<symbol> symbols;
  // Symbols are characters; a byte that is not part of valid UTF-8 is a symbol of its own
  // (llama.cpp trusts the lead byte, which lets a stray lead byte swallow a U+2581).
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t start = pos;
    utf8::decode(text, pos);
    symbols.push_back({start, pos - start, int(symbols.size()) - 1, -1});
    if (symbols.size() > 1) symbols[symbols.size() - 2].next = int(symbols.size()) - 1;
  }

  std::priority_queue<bigram, std::vector<bigram>, worse_bigram> queue;
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const std::size_t size = symbols[left].size + symbols[right].size;
    const token_id id = find_token(index_, text.substr(symbols[left].offset, size));
    if (id != no_token) queue.push({scores_[std::size_t(id)], left, right, std::uint32_t(size)});
  };
  for (int i = 0; i + 1 < int(symbols.size()); ++i) consider(i, i + 1);

  while (!queue.empty()) {
    const bigram b = queue.top();
    queue.pop();
    symbol& left = symbols[b.left];
    symbol& right = symbols[b.right];
    if (left.size == 0 || right.size == 0 || left.size + right.size != b.size) continue;
    left.size += right.size;
    right.size = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = b.left;
    consider(left.prev, b.left);
    consider(b.left, left.next);
  }

  for (int i = 0; i >= 0; i = symbols[i].next) emit_symbol(text.substr(symbols[i].offset, symbols[i].size), out);
}

}  // namespace tg::tokenizer
