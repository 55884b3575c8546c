// register_file.cpp: stored values, banks and behaviours (see register_file.hpp).
#include "drivers/emu/register_file.hpp"

namespace tg::emu {

std::uint64_t register_file::key(std::uint32_t bank, std::uint32_t index) const {
  return (is_banked(index) ? std::uint64_t{bank} + 1 : 0) << 32 | index;
}

std::uint32_t register_file::peek_bank(std::uint32_t bank, std::uint32_t index) const {
  auto it = values_.find(key(bank, index));
  return it == values_.end() ? 0 : it->second;
}

void register_file::poke_bank(std::uint32_t bank, std::uint32_t index, std::uint32_t value) {
  values_[key(bank, index)] = value;
}

// The bank selector itself lies outside the banked range, so asking for the bank only for banked
// registers lets bank_of() peek at it.
std::uint32_t register_file::peek(std::uint32_t index) const {
  return peek_bank(is_banked(index) ? current_bank() : 0, index);
}

void register_file::poke(std::uint32_t index, std::uint32_t value) {
  poke_bank(is_banked(index) ? current_bank() : 0, index, value);
}

std::uint32_t register_file::read(std::uint32_t index) {
  const std::uint32_t stored = peek(index);
  auto it = behaviours_.find(index);
  if (it == behaviours_.end() || !it->second.on_read) return stored;
  return it->second.on_read(stored);
}

void register_file::write(std::uint32_t index, std::uint32_t value) {
  auto it = behaviours_.find(index);
  if (it == behaviours_.end()) {
    poke(index, value);
    return;
  }
  if (it->second.read_only) {
    ++dropped_writes_;
    return;
  }
  poke(index, value);
  if (it->second.on_write) {
    auto on_write = it->second.on_write;  // a behaviour may install behaviours (rehash)
    on_write(value);
  }
}

void register_file::set_banked_range(std::uint32_t first, std::uint32_t last, std::function<std::uint32_t()> bank_of) {
  banked_first_ = first;
  banked_last_ = last;
  bank_of_ = std::move(bank_of);
}

void register_file::clear() {
  values_.clear();
  behaviours_.clear();
  banked_first_ = 1;
  banked_last_ = 0;
  bank_of_ = nullptr;
}

}  // namespace tg::emu
