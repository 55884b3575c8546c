// xdata.hpp: the bridge's 64 KiB XDATA space (its 8051's memory) over vendor requests 0xE4 (read,
// up to 255 bytes a request) and 0xE5 (write one byte a request) (tinygrad/runtime/support/usb.py:
// CustomASM24Controller.read / write).
//
//   std::uint8_t ltssm = read_xdata_byte(dev, 0xB450);   // 0x78: PCIe link up
//   write_xdata(dev, 0xA800, zeros8);                     // eight 0xE5 requests
//
// Slow by design of the firmware: use it for status bytes and fences, not data. usage_error when
// the range leaves XDATA (the SRAM is reachable here only through its first 4 KiB, at 0xF000).
// Not thread-safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/transport/usb/usb_device.hpp"

namespace tg::transport::usb {

// The most bytes one 0xE4 request returns (the reference's limit, CustomASM24Controller.read).
inline constexpr std::size_t xdata_read_max = 255;

void read_xdata(usb_device& dev, std::uint32_t address, std::span<std::byte> out);
void write_xdata(usb_device& dev, std::uint32_t address, std::span<const std::byte> in);
std::uint8_t read_xdata_byte(usb_device& dev, std::uint32_t address);

}  // namespace tg::transport::usb
