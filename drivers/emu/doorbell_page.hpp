// doorbell_page.hpp: the doorbell BAR (BAR2): 64-bit slots the host stores queue write pointers into.
//
// A doorbell is a 64-bit store of the put value at the queue's doorbell offset (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c:
// compute 0x18, SDMA0 0x800). The page is a memfd (8 KiB like the reference mock's BAR2 in
// test/mockgpu/amd), so a transport can map it for a driver; store64() is the same store plus a sequence
// number, so a queue also notices a doorbell that repeats the previous value, and the gpu wakes
// its worker at once. A store made through another mapping is seen at the next poll.
#pragma once
#include <cstdint>
#include <memory>

#include "drivers/emu/memfd_mapping.hpp"

namespace tg::emu {

class doorbell_page {
 public:
  explicit doorbell_page(std::uint64_t size_bytes);

  int fd() const { return mem_.fd(); }
  std::uint64_t size_bytes() const { return mem_.size_bytes(); }

  // 8-byte aligned offsets inside the page (usage_error otherwise).
  std::uint64_t load64(std::uint64_t byte_offset) const;
  void store64(std::uint64_t byte_offset, std::uint64_t value);
  // How many times store64 wrote this slot.
  std::uint64_t sequence(std::uint64_t byte_offset) const;

 private:
  std::uint64_t slot(std::uint64_t byte_offset) const;

  memfd_mapping mem_;
  std::unique_ptr<std::uint64_t[]> sequence_;  // guarded by the gpu's lock
};

}  // namespace tg::emu
