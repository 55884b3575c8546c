// token_index.cpp: FNV-1a hashing and linear probing.
#include "llm/tokenizer/token_index.hpp"

#include <tg/core/error.hpp>
#include <tg/core/hash.hpp>

namespace tg::tokenizer {

std::uint32_t token_index::hash_of(std::string_view text) {
  // FNV-1a (64-bit), then a multiplicative mix so the low bits used for the slot are good.
  return std::uint32_t((fnv_bytes(text) * 0x9E3779B97F4A7C15ull) >> 32);
}

token_index::token_index(const std::vector<std::string>& texts) {
  std::size_t total = 0;
  for (const auto& t : texts) total += t.size();
  if (total > UINT32_MAX) throw usage_error(str("tokenizer: ", total, " bytes of token text is more than 4 GiB"));
  pool_.reserve(total);
  offsets_.reserve(texts.size() + 1);
  for (const auto& t : texts) {
    offsets_.push_back(std::uint32_t(pool_.size()));
    pool_ += t;
  }
  offsets_.push_back(std::uint32_t(pool_.size()));

  std::size_t capacity = 16;
  while (capacity < 2 * texts.size()) capacity *= 2;
  slots_.assign(capacity, slot{0, no_token});
  const std::size_t mask = capacity - 1;
  for (std::size_t id = 0; id < texts.size(); ++id) {
    const std::uint32_t hash = hash_of(texts[id]);
    std::size_t i = hash & mask;
    while (slots_[i].id != no_token && !(slots_[i].hash == hash && text_of(slots_[i].id) == texts[id]))
      i = (i + 1) & mask;
    if (slots_[i].id == no_token) slots_[i] = {hash, token_id(id)};  // else keep the lower id
  }
}

token_id token_index::find(std::string_view text) const {
  if (slots_.empty()) return no_token;
  const std::uint32_t hash = hash_of(text);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const slot& s = slots_[i];
    if (s.id == no_token) return no_token;
    if (s.hash == hash && text_of(s.id) == text) return s.id;
  }
}

}  // namespace tg::tokenizer
