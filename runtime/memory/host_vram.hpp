// host_vram.hpp: VRAM simulated in host memory, for tests (and anything else without a GPU).
//
// Sparse: 4 KiB pages come into being on first write, so a test can model a 16 GiB card. Words
// never written read as `untouched_word`; tests set it to garbage to prove that nothing relies on
// VRAM starting zeroed. Counts writes, so a test can prove that a failed call wrote nothing.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>

#include "runtime/memory/vram_access.hpp"

namespace tg::memory {

class host_vram final : public vram_access {
 public:
  explicit host_vram(std::uint64_t size_bytes, std::uint64_t untouched_word = 0);

  std::uint64_t read64(gpu_pa at) override;
  void write64(gpu_pa at, std::uint64_t word) override;
  void write_words(gpu_pa first, std::span<const std::uint64_t> words) override;
  void read_words(gpu_pa first, std::span<std::uint64_t> words) override;

  std::uint64_t size_bytes() const { return size_; }
  std::uint64_t write_calls() const { return write_calls_; }
  std::uint64_t words_written() const { return words_written_; }

 private:
  static constexpr std::uint64_t words_per_page = 512;
  using page = std::array<std::uint64_t, words_per_page>;

  void check(gpu_pa first, std::uint64_t words) const;
  page& page_for_write(std::uint64_t index);

  std::uint64_t size_;
  std::uint64_t untouched_;
  std::unordered_map<std::uint64_t, std::unique_ptr<page>> pages_;
  std::uint64_t write_calls_ = 0;
  std::uint64_t words_written_ = 0;
};

}  // namespace tg::memory
