// mapped_bar.hpp: a BAR the host reaches through a shared memory mapping (sysfs `resourceN`, or
// the emulated GPU's VRAM memfd): the bar_window of the PCI transport.
//
// Register BARs (doorbells, MMIO) must see exactly the accesses the driver asked for, so with
// `dword_only` every range access is a loop of volatile 32-bit loads or stores; VRAM (BAR0) is
// plain memory behind a prefetchable BAR, so its ranges are memcpy. write64 is one 64-bit store
// either way (a doorbell must not be split: tinygrad/runtime/support/am/amdev.py maps BAR2 as
// 64-bit words, AMDev.doorbell64).
//
//   tg::transport::pci::mapped_bar bar0(fd, 256 << 20, false, "pci:0000:03:00.0 BAR0");
//   bar0.write32(0x1000, 42);  std::byte* p = bar0.mapping();
//
// Not thread-safe beyond what the hardware gives: concurrent aligned stores do not tear.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/transport/transport.hpp"

namespace tg::transport::pci {

class mapped_bar final : public bar_window {
 public:
  // Maps `size` bytes of `fd` from offset 0, MAP_SHARED; device_error naming `what` on failure.
  // The fd may be closed afterwards.
  mapped_bar(int fd, std::uint64_t size, bool dword_only, std::string what);
  ~mapped_bar() override;
  mapped_bar(const mapped_bar&) = delete;
  mapped_bar& operator=(const mapped_bar&) = delete;

  std::uint64_t size() const override { return size_; }
  std::uint32_t read32(std::uint64_t offset) override;
  void write32(std::uint64_t offset, std::uint32_t value) override;
  void write64(std::uint64_t offset, std::uint64_t value) override;
  void read(std::uint64_t offset, std::span<std::byte> out) override;
  void write(std::uint64_t offset, std::span<const std::byte> in) override;
  std::byte* mapping() override { return base_; }

 private:
  void check(std::uint64_t offset, std::uint64_t bytes, std::uint64_t align, const char* op) const;

  std::byte* base_ = nullptr;
  std::uint64_t size_ = 0;
  bool dword_only_;
  std::string what_;
};

// The bar_window checks every transport shares: 4-byte alignment (8 for write64), 4-byte
// multiples, inside the BAR; usage_error naming `what`, the operation and the numbers.
void check_bar_access(const std::string& what, std::uint64_t bar_size, std::uint64_t offset, std::uint64_t bytes,
                      std::uint64_t align, const char* op);

}  // namespace tg::transport::pci
