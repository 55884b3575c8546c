// usb_bar_window.cpp: BAR accesses as PCIe memory streams (tinygrad/runtime/support/usb.py:
// USBMMIOInterface).
//
//   window.write32(offset, value);
//
// Not thread-safe.
#include "runtime/transport/usb/usb_bar_window.hpp"

#include <array>

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::transport::usb {

void usb_bar_window::check(const char* what, std::uint64_t offset, std::uint64_t bytes) const {
  if (offset % 4 != 0 || bytes % 4 != 0)
    throw usage_error(str(dev_->name(), ": BAR", index_, " ", what, " of ", bytes, " bytes at offset ", upper_hex(offset),
                          ": offset and size must be multiples of 4"));
  if (offset > region_.size || bytes > region_.size - offset)
    throw usage_error(str(dev_->name(), ": BAR", index_, " ", what, " of ", bytes, " bytes at offset ", upper_hex(offset),
                          " leaves the BAR (", region_.size, " bytes)"));
}

std::uint32_t usb_bar_window::read32(std::uint64_t offset) {
  std::array<std::byte, 4> b{};
  read(offset, b);
  return std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 | std::uint32_t(b[2]) << 16 | std::uint32_t(b[3]) << 24;
}

void usb_bar_window::write32(std::uint64_t offset, std::uint32_t value) {
  std::array<std::byte, 4> b{};
  for (int i = 0; i < 4; ++i) b[i] = std::byte(value >> (8 * i));
  write(offset, b);
}

void usb_bar_window::write64(std::uint64_t offset, std::uint64_t value) {
  std::array<std::byte, 8> b{};
  for (int i = 0; i < 8; ++i) b[i] = std::byte(value >> (8 * i));
  write(offset, b);  // one stream: check_stream_limits keeps chunks at 8 bytes or more
}

void usb_bar_window::read(std::uint64_t offset, std::span<std::byte> out) {
  check("read", offset, out.size());
  stream_read(*dev_, region_.bus_address + offset, out, *limits_);
}

void usb_bar_window::write(std::uint64_t offset, std::span<const std::byte> in) {
  check("write", offset, in.size());
  stream_write(*dev_, region_.bus_address + offset, in, *limits_);
}

}  // namespace tg::transport::usb
