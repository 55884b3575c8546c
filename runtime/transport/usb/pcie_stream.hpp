// pcie_stream.hpp: PCIe memory writes and reads as 0xF0 streams (mode 1 / mode 2) plus one bulk
// transfer each (tinygrad/runtime/support/usb.py: CustomASM24Controller.pcie_mem_write,
// pcie_mem_read), split into bounded chunks (tg's choice).
//
//   stream_limits limits;                         // 64 KiB chunks, 1 s + size at 1 MB/s
//   stream_write(dev, 0x8'0000'0000, bytes, limits);  // 200 KiB -> 4 control + 4 bulk OUT
//   stream_read(dev, bar5 + 0xDE3 * 4, four_bytes, limits);
//
// Why chunks: the reference sent any write as one bulk transfer; a 4 MiB one ran past its 1 s
// timeout at the bridge's ~3.6 MB/s and left the firmware wedged (USB3.bulk_write's default
// timeout is 1000 ms). Here no bulk transfer is larger than max_chunk_bytes, and each chunk's
// timeout grows with its size so a healthy chunk never times out.
// usage_error for unaligned addresses or sizes. Not thread-safe.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/transport/usb/usb_device.hpp"

namespace tg::transport::usb {

struct stream_limits {
  std::uint64_t max_chunk_bytes = 64 * 1024;         // a multiple of 4, at least 8
  std::chrono::milliseconds base_timeout{1000};      // per chunk, plus the time at the floor speed
  std::uint64_t floor_bytes_per_second = 1'000'000;  // well below the measured 3.6 MB/s
  // The least a read's bulk IN waits: it carries the GPU's completion, which a card in a mode-1
  // reset or powering up may hold back for seconds (Linux amdgpu_device_mode1_reset polls up to
  // its usec_timeout for registers to answer). A register read that gave up at 1 s failed a boot.
  std::chrono::milliseconds read_timeout{30000};
};

// usage_error naming the bad field.
void check_stream_limits(const stream_limits& limits);

// The bulk timeout of one transfer of `bytes`: base + bytes at the floor speed; a read's, at least
// read_timeout.
std::chrono::milliseconds bulk_timeout(const stream_limits& limits, std::uint64_t bytes);
std::chrono::milliseconds read_bulk_timeout(const stream_limits& limits, std::uint64_t bytes);

void stream_write(usb_device& dev, std::uint64_t address, std::span<const std::byte> in, const stream_limits& limits);
void stream_read(usb_device& dev, std::uint64_t address, std::span<std::byte> out, const stream_limits& limits);

}  // namespace tg::transport::usb
