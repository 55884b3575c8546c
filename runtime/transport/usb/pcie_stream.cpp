// pcie_stream.cpp: chunked mode-1 / mode-2 streams (tinygrad/runtime/support/usb.py:
// CustomASM24Controller.pcie_mem_write, pcie_mem_read).
//
//   stream_write(dev, address, bytes, limits);
//
// Not thread-safe.
#include "runtime/transport/usb/pcie_stream.hpp"

#include <algorithm>
#include <array>

#include "runtime/transport/usb/bridge_requests.hpp"
#include "runtime/transport/usb/tlp.hpp"
#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::transport::usb {
namespace {

// 0xF0 wValue of a stream: the fmt byte and all four byte enables.
constexpr std::uint16_t stream_value(std::uint8_t fmt) { return std::uint16_t(fmt | 0x0F << 8); }

void check_alignment(const usb_device& dev, const char* what, std::uint64_t address, std::size_t bytes) {
  if (address % 4 != 0 || bytes % 4 != 0)
    throw usage_error(str(dev.name(), ": PCIe memory ", what, " of ", bytes, " bytes at ", upper_hex(address),
                          ": address and size must be multiples of 4 (the bridge streams whole dwords)"));
}

void start_stream(usb_device& dev, std::uint8_t fmt, tlp_mode mode, std::uint64_t address, std::size_t bytes) {
  std::array<std::byte, 12> payload = tlp_payload(address, std::uint32_t(bytes / 4));
  dev.control_out(bridge_request::tlp, stream_value(fmt), std::uint16_t(mode), payload, tlp_timeout);
}

}  // namespace

void check_stream_limits(const stream_limits& limits) {
  // At least 8, so that a 64-bit doorbell write stays one stream.
  if (limits.max_chunk_bytes < 8 || limits.max_chunk_bytes % 4 != 0)
    throw usage_error(str("usb: chunk size ", limits.max_chunk_bytes, " bytes must be a multiple of 4 of at least 8"));
  if (limits.floor_bytes_per_second == 0) throw usage_error("usb: floor_bytes_per_second must not be 0");
  if (limits.base_timeout.count() <= 0) throw usage_error("usb: base_timeout must be positive");
}

std::chrono::milliseconds bulk_timeout(const stream_limits& limits, std::uint64_t bytes) {
  std::uint64_t ms = (bytes * 1000 + limits.floor_bytes_per_second - 1) / limits.floor_bytes_per_second;
  return limits.base_timeout + std::chrono::milliseconds(ms);
}

std::chrono::milliseconds read_bulk_timeout(const stream_limits& limits, std::uint64_t bytes) {
  return std::max(bulk_timeout(limits, bytes), limits.read_timeout);
}

void stream_write(usb_device& dev, std::uint64_t address, std::span<const std::byte> in, const stream_limits& limits) {
  check_alignment(dev, "write", address, in.size());
  for (std::size_t done = 0; done < in.size();) {
    std::size_t n = std::size_t(std::min<std::uint64_t>(limits.max_chunk_bytes, in.size() - done));
    try {
      start_stream(dev, tlp_fmt::memory_write64, tlp_mode::stream_write, address + done, n);
      dev.bulk_out(in.subspan(done, n), bulk_timeout(limits, n));
    } catch (const device_error& e) {
      throw device_error(str(e.what(), "; while writing PCIe memory at ", upper_hex(address + done)));
    }
    done += n;
  }
}

void stream_read(usb_device& dev, std::uint64_t address, std::span<std::byte> out, const stream_limits& limits) {
  check_alignment(dev, "read", address, out.size());
  for (std::size_t done = 0; done < out.size();) {
    std::size_t n = std::size_t(std::min<std::uint64_t>(limits.max_chunk_bytes, out.size() - done));
    try {
      start_stream(dev, tlp_fmt::memory_read64, tlp_mode::stream_read, address + done, n);
      dev.bulk_in(out.subspan(done, n), read_bulk_timeout(limits, n));
    } catch (const device_error& e) {
      throw device_error(str(e.what(), "; while reading PCIe memory at ", upper_hex(address + done)));
    }
    done += n;
  }
}

}  // namespace tg::transport::usb
