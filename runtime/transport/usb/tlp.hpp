// tlp.hpp: single PCIe TLPs through vendor request 0xF0 (mode 0), with the completion fetched by
// 0xF0 IN, decoded and retried as the firmware asks (tinygrad/runtime/support/usb.py:
// CustomASM24Controller.pcie_request). Used for configuration cycles; memory data goes through
// pcie_stream.hpp.
//
//   std::uint32_t vendor = config_read(dev, 4, 0x00, 2);           // GPU vendor id
//   config_write(dev, 4, 0x04, 0x07, 1);                           // COMMAND = IO | MEM | MASTER
//
// device_error when the completion reports a status other than success (naming it), or when the
// bridge's return status stays non-zero through all retries ("TLP error after retries").
// Not thread-safe.
#pragma once
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/transport/usb/usb_device.hpp"

namespace tg::transport::usb {

// fmt_type bytes: PCIe Fmt[2:0] | Type[4:0] (the values pcie_cfg_req, pcie_mem_write and
// pcie_mem_read send).
namespace tlp_fmt {
inline constexpr std::uint8_t config_read0 = 0x04, config_read1 = 0x05;
inline constexpr std::uint8_t config_write0 = 0x44, config_write1 = 0x45;
inline constexpr std::uint8_t memory_read64 = 0x20, memory_write64 = 0x60;
}  // namespace tlp_fmt

// 0xF0 wIndex: what the bridge does with the TLP (the mode of CustomASM24Controller._f0_out).
enum class tlp_mode : std::uint16_t { single = 0, stream_write = 1, stream_read = 2 };

// Memory writes are posted and messages have no completion; everything else has one (the fast path
// of pcie_request).
constexpr bool tlp_expects_completion(std::uint8_t fmt) {
  return (fmt & 0xDF) != 0x40 && (fmt & 0xB8) != 0x30;
}

// Byte enables of a 1..4-byte access at `address` within its dword (as pcie_request).
constexpr std::uint32_t tlp_byte_enable(unsigned size, std::uint64_t address) {
  return ((1u << size) - 1) << (address & 3);
}

// The address of a configuration register: bus << 24 | device << 19 | function << 16 | register.
constexpr std::uint64_t config_address(unsigned bus, unsigned device, unsigned function, unsigned reg) {
  return std::uint64_t(bus) << 24 | std::uint64_t(device) << 19 | std::uint64_t(function) << 16 | (reg & 0xFFF);
}

// The 12-byte 0xF0 OUT payload: address low, address high, value (data or dword count), all LE.
std::array<std::byte, 12> tlp_payload(std::uint64_t address, std::uint32_t value);

// The 8-byte 0xF0 IN reply.
struct tlp_completion {
  std::uint32_t data = 0;
  unsigned status = 0;             // byte 4 bits 7:5: 0 success, 1 UR, 2 CRS, 4 CA
  std::uint8_t return_status = 0;  // byte 7: 0 = the bridge completed the request
};
tlp_completion decode_completion(std::span<const std::byte, 8> reply);
const char* completion_status_name(unsigned status);

// How often a request whose return status is non-zero is re-issued, and the pause between.
struct tlp_retry_policy {
  unsigned retries = 10;
  std::chrono::milliseconds pause{1};
};

// One TLP of 1, 2 or 4 bytes at `address` (not necessarily dword aligned); returns the value read
// (shifted and masked to `size` bytes), 0 for a write. usage_error for a size that is not 1, 2 or
// 4 or that crosses a dword.
std::uint32_t issue_tlp(usb_device& dev, std::uint8_t fmt, std::uint64_t address, std::uint32_t value, unsigned size,
                        const tlp_retry_policy& retry = {});

// Configuration cycles to device 0 function 0 of `bus`: Type 0 on bus 0, Type 1 beyond.
std::uint32_t config_read(usb_device& dev, unsigned bus, unsigned reg, unsigned size,
                          const tlp_retry_policy& retry = {});
void config_write(usb_device& dev, unsigned bus, unsigned reg, std::uint32_t value, unsigned size,
                  const tlp_retry_policy& retry = {});

}  // namespace tg::transport::usb
