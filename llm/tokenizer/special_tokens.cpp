// special_tokens.cpp: the longest-match scan, bucketed by first byte.
#include "llm/tokenizer/special_tokens.hpp"

#include <algorithm>

namespace tg::tokenizer {

special_token_matcher::special_token_matcher(const vocabulary& vocab) {
  for (std::size_t i = 0; i < vocab.tokens.size(); ++i) {
    const token_type type = vocab.type_of(token_id(i));
    const bool matchable = type == token_type::control || type == token_type::unknown ||
                           type == token_type::user_defined;
    const std::string_view text = vocab.tokens[i];
    if (!matchable || text.empty()) continue;
    by_first_byte_[static_cast<unsigned char>(text[0])].push_back(
        {std::string(text), token_id(i), type == token_type::user_defined});
  }
  for (auto& bucket : by_first_byte_)
    std::sort(bucket.begin(), bucket.end(), [](const entry& a, const entry& b) {
      return a.text.size() != b.text.size() ? a.text.size() > b.text.size() : a.id < b.id;
    });
}

std::vector<fragment> special_token_matcher::split(std::string_view text, bool parse_special) const {
  std::vector<fragment> fragments;
  std::size_t plain_start = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const entry* found = nullptr;
    for (const entry& e : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
      if ((parse_special || e.always) && text.substr(pos).starts_with(e.text)) {
        found = &e;
        break;
      }
    }
    if (found == nullptr) {
      ++pos;
      continue;
    }
    if (pos > plain_start) fragments.push_back({text.substr(plain_start, pos - plain_start)});
    fragments.push_back({text.substr(pos, found->text.size()), found->id});
    pos += found->text.size();
    plain_start = pos;
  }
  if (plain_start < text.size()) fragments.push_back({text.substr(plain_start)});
  return fragments;
}

}  // namespace tg::tokenizer
