// usb_bar_window.hpp: a GPU BAR reached through the bridge: every access is a bounded PCIe memory
// stream at the BAR's assigned bus address plus the offset (as tinygrad/runtime/support/usb.py:
// USBMMIOInterface). There is no mapping.
//
//   usb_bar_window regs(dev, 5, bars[5], limits);
//   std::uint32_t v = regs.read32(0xDE3 * 4);   // 0xF0 mode 2 (1 dword) + 4-byte bulk IN
//   regs.write64(doorbell, put);                // one 2-dword stream
//
// usage_error for unaligned or out-of-range accesses. Not thread-safe.
#pragma once
#include <cstdint>

#include "runtime/transport/transport.hpp"
#include "runtime/transport/usb/pcie_stream.hpp"
#include "runtime/transport/usb/usb_device.hpp"

namespace tg::transport::usb {

class usb_bar_window final : public bar_window {
 public:
  // `dev` and `limits` must outlive the window.
  usb_bar_window(usb_device& dev, unsigned index, const bar_region& region, const stream_limits& limits)
      : dev_(&dev), index_(index), region_(region), limits_(&limits) {}

  // After a reset re-assigns the BARs; the window object (and references to it) stay valid.
  void set_region(const bar_region& region) { region_ = region; }

  std::uint64_t size() const override { return region_.size; }
  std::uint32_t read32(std::uint64_t offset) override;
  void write32(std::uint64_t offset, std::uint32_t value) override;
  void write64(std::uint64_t offset, std::uint64_t value) override;
  void read(std::uint64_t offset, std::span<std::byte> out) override;
  void write(std::uint64_t offset, std::span<const std::byte> in) override;

 private:
  void check(const char* what, std::uint64_t offset, std::uint64_t bytes) const;

  usb_device* dev_;
  unsigned index_;
  bar_region region_;
  const stream_limits* limits_;
};

}  // namespace tg::transport::usb
