// usb_sram.hpp: the bridge's 512 KiB SRAM as the transport hands it out: DMA regions from a
// non-wrapping bump allocator, and the whole SRAM as the staging window (facts 7.6, 7.9, 7.10).
// The GPU sees SRAM offset o at PCIe 0x200000 + o.
//
//   sram_allocator sram;
//   auto psp = std::make_unique<usb_dma_region>(dev, sram.allocate(dev.name(), 512 * 1024), 512 * 1024);
//   usb_staging_window window(dev);
//   window.write(0, bytes);                    // 0xF2 + bulk OUT 0x02
//   window.arm_read(0, n); /* GPU copies, then stores at 0x82200C */ window.finish_read(out);
//
// DMA regions and the staging window share the same SRAM: the driver uses DMA memory during boot
// (PSP firmware staging) and the window afterwards; nothing stops one from overwriting the other.
// Host access to a DMA region: writes from a 16 KiB slot boundary go in bulk (0xF2) in whole
// sectors, the remainder one 0xE5 request per byte; reads go through 0xE4. 0xE4/0xE5 reach only
// the SRAM's first 4 KiB (XDATA 0xF000..0xFFFF), so other accesses are a usage_error.
// Not thread-safe.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/transport/transport.hpp"
#include "runtime/transport/usb/usb_device.hpp"

namespace tg::transport::usb {

class sram_allocator {
 public:
  // Returns the SRAM offset of `bytes` (a positive multiple of 4 KiB); device_error when the SRAM
  // has no room left. Never wraps and never frees (reset() starts over).
  std::uint64_t allocate(const std::string& device_name, std::uint64_t bytes);
  void reset() { next_ = 0; }
  std::uint64_t used() const { return next_; }

 private:
  std::uint64_t next_ = 0;
};

class usb_dma_region final : public dma_region {
 public:
  usb_dma_region(usb_device& dev, std::uint64_t sram_offset, std::uint64_t bytes)
      : dev_(&dev), sram_offset_(sram_offset), size_(bytes) {}
  std::uint64_t size() const override { return size_; }
  std::vector<std::uint64_t> page_bus_addresses() const override;
  void read(std::uint64_t offset, std::span<std::byte> out) override;
  void write(std::uint64_t offset, std::span<const std::byte> in) override;

 private:
  void check(const char* what, std::uint64_t offset, std::uint64_t bytes) const;

  usb_device* dev_;
  std::uint64_t sram_offset_, size_;
};

class usb_staging_window final : public staging_window {
 public:
  explicit usb_staging_window(usb_device& dev) : dev_(&dev) {}
  std::uint64_t bus_address() const override;
  std::uint64_t size() const override;
  // `offset` must start a 16 KiB slot; the last 512-byte sector is padded with zeros.
  void write(std::uint64_t offset, std::span<const std::byte> in) override;
  void arm_read(std::uint64_t offset, std::uint64_t bytes) override;
  std::uint64_t release_bus_address() const override;
  void finish_read(std::span<std::byte> out) override;
  // A USB reset drops whatever read the bridge had armed.
  void forget_armed_read() { armed_bytes_ = 0; }

 private:
  usb_device* dev_;
  std::uint64_t armed_bytes_ = 0;  // 0: no read armed
};

}  // namespace tg::transport::usb
