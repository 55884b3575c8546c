// bpe_encoder.cpp: merge table construction and the per-word merge loop.
#include "llm/tokenizer/bpe_encoder.hpp"

#include <queue>
#include <string>

#include <tg/core/error.hpp>
#include "llm/tokenizer/byte_level.hpp"
#include "llm/tokenizer/utf8.hpp"

namespace tg::tokenizer {

namespace {

std::uint64_t pair_key(token_id left, token_id right) {
  return std::uint64_t(std::uint32_t(left)) << 32 | std::uint32_t(right);
}

bool is_normal(token_type type) { return type == token_type::normal; }

// One symbol of the word being merged, in a doubly linked list over a vector.
struct symbol {
  token_id id;
  int prev, next;
};

// A pair that could merge; stale once either side has changed (checked when popped).
struct candidate {
  std::int32_t rank;
  int left, right;
  token_id left_id, right_id, result;
};

// Lowest rank first, then leftmost, so equal pairs merge left to right.
struct later_candidate {
  bool operator()(const candidate& a, const candidate& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  }
};

}  // namespace

bpe_encoder::bpe_encoder(const vocabulary& vocab, pre_tokenizer_kind kind)
    : pre_(kind),
      whole_word_first_(kind == pre_tokenizer_kind::llama3),
      index_(make_token_index(vocab)),
      unk_id_(vocab.unk_id.value_or(no_token)) {
  is_normal_.reserve(vocab.tokens.size());
  for (std::size_t id = 0; id < vocab.tokens.size(); ++id) is_normal_.push_back(is_normal(vocab.type_of(token_id(id))));
  for (int b = 0; b < 256; ++b) {
    std::string text;
    utf8::append(text, byte_level::byte_to_code_point[b]);
    byte_tokens_[b] = find_normal(text);
  }
  if (vocab.merges.empty())
    derive_merges_from_ids(vocab);
  else
    load_merges(vocab);
}

token_id bpe_encoder::find_normal(std::string_view text) const {
  const token_id id = find_token(index_, text);
  return id != no_token && is_normal_[std::size_t(id)] ? id : no_token;
}

void bpe_encoder::add_merge(token_id left, token_id right, merge m) {
  merges_.emplace(pair_key(left, right), m);  // keeps the first, best-ranked entry
}

void bpe_encoder::load_merges(const vocabulary& vocab) {
  merges_.reserve(vocab.merges.size());
  std::string joined;
  for (std::size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const std::string_view line = vocab.merges[rank];
    // Byte-level text has no raw spaces, so the first space after position 0 separates the
    // halves (position 0 is skipped in case a vocabulary has a literal-space token).
    const std::size_t space = line.find(' ', 1);
    if (space == std::string_view::npos)
      throw usage_error(str("tokenizer: merge ", rank, " '", line, "' is not two tokens separated by a space"));
    const std::string_view left = line.substr(0, space), right = line.substr(space + 1);
    joined.assign(left).append(right);
    const token_id left_id = find_token(index_, left), right_id = find_token(index_, right);
    const token_id result = find_token(index_, joined);
    // A merge naming tokens the vocabulary lacks can never apply; skip it.
    if (left_id == no_token || right_id == no_token || result == no_token) continue;
    add_merge(left_id, right_id, {std::int32_t(rank), result});
  }
}

void bpe_encoder::derive_merges_from_ids(const vocabulary& vocab) {
  // Every way of cutting a normal token into two tokens is a pair that forms it; its rank
  // is the formed token's id.
  for (std::size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (!is_normal(vocab.type_of(token_id(id)))) continue;
    const std::string_view text = vocab.tokens[id];
    for (std::size_t cut = utf8::sequence_length(text[0]); cut < text.size();
         cut += utf8::sequence_length(text[cut])) {
      const token_id left = find_token(index_, text.substr(0, cut)), right = find_token(index_, text.substr(cut));
      if (left != no_token && right != no_token) add_merge(left, right, {std::int32_t(id), token_id(id)});
    }
  }
}

std::optional<bpe_encoder::merge> bpe_encoder::find_merge(token_id left, token_id right) const {
  if (left == no_token || right == no_token) return std::nullopt;
  const auto it = merges_.find(pair_key(left, right));
  if (it == merges_.end()) return std::nullopt;
  return it->second;
}

void bpe_encoder::encode_word(std::string_view word, std::vector<token_id>& out) const {
  if (word.empty()) return;
  if (whole_word_first_) {
    const token_id whole = find_normal(byte_level::encode(word));
    if (whole != no_token) {
      out.push_back(whole);
      return;
    }
  }
  std::vector<symbol> symbols(word.size());
  for (std::size_t i = 0; i < word.size(); ++i)
    symbols[i] = {byte_tokens_[static_cast<unsigned char>(word[i])], int(i) - 1,
                  i + 1 < word.size() ? int(i) + 1 : -1};

  std::priority_queue<candidate, std::vector<candidate>, later_candidate> queue;
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    if (const auto m = find_merge(symbols[left].id, symbols[right].id))
      queue.push({m->rank, left, right, symbols[left].id, symbols[right].id, m->result});
  };
  for (int i = 0; i + 1 < int(word.size()); ++i) consider(i, i + 1);

  while (!queue.empty()) {
    const candidate c = queue.top();
    queue.pop();
    symbol& left = symbols[c.left];
    symbol& right = symbols[c.right];
    if (left.next != c.right || left.id != c.left_id || right.id != c.right_id) continue;
    left.id = c.result;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = c.left;
    right.id = no_token;
    right.next = right.prev = -1;
    consider(left.prev, c.left);
    consider(c.left, left.next);
  }

  for (int i = 0; i >= 0; i = symbols[i].next) {
    if (symbols[i].id != no_token) {
      out.push_back(symbols[i].id);
    } else if (unk_id_ != no_token) {
      out.push_back(unk_id_);
    } else {
      throw usage_error(str("tokenizer: byte 0x", std::hex, int(static_cast<unsigned char>(word[i])),
                            " has no token in this vocabulary and it defines no unknown token"));
    }
  }
}

void bpe_encoder::encode(std::string_view text, std::vector<token_id>& out) const {
  // Long prompts repeat words; remember each distinct word's ids for this call.
  std::unordered_map<std::string_view, std::vector<token_id>> seen;
  for (const std::string_view word : pre_.split(text)) {
    auto [it, inserted] = seen.try_emplace(word);
    if (inserted) encode_word(word, it->second);
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
}

}  // namespace tg::tokenizer
