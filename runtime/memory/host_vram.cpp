// host_vram.cpp: sparse host-memory VRAM (see host_vram.hpp).
#include "runtime/memory/host_vram.hpp"

#include <algorithm>

#include <tg/core/error.hpp>

namespace tg::memory {

host_vram::host_vram(std::uint64_t size_bytes, std::uint64_t untouched_word)
    : size_(size_bytes), untouched_(untouched_word) {}

void host_vram::check(gpu_pa first, std::uint64_t words) const {
  if (first.value % 8 != 0 || first.value > size_ || words > (size_ - first.value) / 8)
    throw usage_error(str("host vram: access of ", words, " words at ", first, " is unaligned or outside the ",
                          size_, "-byte VRAM"));
}

host_vram::page& host_vram::page_for_write(std::uint64_t index) {
  auto& p = pages_[index];
  if (!p) {
    p = std::make_unique<page>();
    p->fill(untouched_);
  }
  return *p;
}

std::uint64_t host_vram::read64(gpu_pa at) {
  check(at, 1);
  const auto it = pages_.find(at.value / 4096);
  return it == pages_.end() ? untouched_ : (*it->second)[at.value % 4096 / 8];
}

void host_vram::write64(gpu_pa at, std::uint64_t word) {
  check(at, 1);
  ++write_calls_;
  ++words_written_;
  page_for_write(at.value / 4096)[at.value % 4096 / 8] = word;
}

void host_vram::write_words(gpu_pa first, std::span<const std::uint64_t> words) {
  check(first, words.size());
  ++write_calls_;
  words_written_ += words.size();
  for (std::uint64_t i = 0, at = first.value; i < words.size(); ++i, at += 8)
    page_for_write(at / 4096)[at % 4096 / 8] = words[i];
}

void host_vram::read_words(gpu_pa first, std::span<std::uint64_t> words) {
  check(first, words.size());
  std::uint64_t i = 0, at = first.value;
  while (i < words.size()) {
    const std::uint64_t in_page = std::min<std::uint64_t>(words.size() - i, (4096 - at % 4096) / 8);
    const auto it = pages_.find(at / 4096);
    for (std::uint64_t k = 0; k < in_page; ++k)
      words[i + k] = it == pages_.end() ? untouched_ : (*it->second)[at % 4096 / 8 + k];
    i += in_page;
    at += in_page * 8;
  }
}

}  // namespace tg::memory
