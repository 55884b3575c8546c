// doorbell_page.cpp: 64-bit doorbell slots in a memfd (see doorbell_page.hpp).
#include "drivers/emu/doorbell_page.hpp"

#include <atomic>

#include "runtime/memory/address.hpp"
#include <tg/core/error.hpp>

namespace tg::emu {

doorbell_page::doorbell_page(std::uint64_t size_bytes)
    : mem_("tg-emu-doorbells", size_bytes), sequence_(new std::uint64_t[size_bytes / 8]()) {}

std::uint64_t doorbell_page::slot(std::uint64_t byte_offset) const {
  if (byte_offset % 8 != 0 || byte_offset >= size_bytes())
    throw usage_error(str("emu: doorbell offset ", hex{byte_offset}, " is not an 8-byte slot inside the ",
                          size_bytes(), "-byte doorbell page"));
  return byte_offset / 8;
}

std::uint64_t doorbell_page::load64(std::uint64_t byte_offset) const {
  auto* words = reinterpret_cast<std::uint64_t*>(mem_.data());
  return std::atomic_ref<std::uint64_t>(words[slot(byte_offset)]).load(std::memory_order_acquire);
}

void doorbell_page::store64(std::uint64_t byte_offset, std::uint64_t value) {
  auto* words = reinterpret_cast<std::uint64_t*>(mem_.data());
  const std::uint64_t i = slot(byte_offset);
  std::atomic_ref<std::uint64_t>(words[i]).store(value, std::memory_order_release);
  ++sequence_[i];
}

std::uint64_t doorbell_page::sequence(std::uint64_t byte_offset) const { return sequence_[slot(byte_offset)]; }

}  // namespace tg::emu
