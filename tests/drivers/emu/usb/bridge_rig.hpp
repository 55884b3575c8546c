// bridge_rig.hpp: an emulated GPU behind an emulated ASM2464 bridge, and the raw request helpers a
// test needs to drive it, written from the protocol of tinygrad's usb.py and System.pci_setup_usb_bars (not
// from the emulator's code): config TLPs, memory streams, SRAM transfers, bus and BAR setup.
#pragma once
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "drivers/emu/gpu.hpp"
#include "drivers/emu/usb/emu_bridge.hpp"

namespace tg::emu::usb::test {

using namespace std::chrono_literals;
using transport::usb::transfer_result;
using transport::usb::usb_handle;
using transport::usb::usb_status;

inline constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;
inline constexpr std::uint64_t nonpref_base = 0x1000'0000, pref_base = 0x8'0000'0000;  // USBPCIDevice's windows

struct rig {
  explicit rig(bridge_config config = {}) : bridge(g, config), h(bridge.open(bridge.list().front())) {}
  gpu g{{.vram_bytes = 64 * MiB}};
  emu_bridge bridge;
  std::unique_ptr<usb_handle> h;
};

inline transfer_result vendor_out(usb_handle& h, std::uint8_t request, std::uint16_t value, std::uint16_t index,
                                  std::span<std::byte> data = {}, std::chrono::milliseconds timeout = 1000ms) {
  return h.control(0x40, request, value, index, data, timeout);
}

inline std::uint8_t read_xdata8(usb_handle& h, std::uint16_t address) {
  std::byte b{};
  const transfer_result r = h.control(0xC0, 0xE4, address, 0, std::span(&b, 1), 1000ms);
  REQUIRE(r.status == usb_status::ok);
  return std::uint8_t(b);
}

inline void power_on(usb_handle& h) { REQUIRE(vendor_out(h, 0xF3, 1, 0, {}, 10000ms).status == usb_status::ok); }

// One 0xF0 mode-0 TLP: 12 bytes (address low, address high, value).
inline transfer_result send_tlp(usb_handle& h, std::uint8_t fmt_type, std::uint8_t byte_enable, std::uint64_t address,
                                std::uint32_t value) {
  std::array<std::uint32_t, 3> words{std::uint32_t(address), std::uint32_t(address >> 32), value};
  return vendor_out(h, 0xF0, std::uint16_t(fmt_type | byte_enable << 8), 0, std::as_writable_bytes(std::span(words)),
                    5000ms);
}

struct completion {
  std::uint32_t data = 0;
  unsigned status = 0;         // byte 4 bits 7:5
  unsigned return_status = 0;  // byte 7
};

inline completion fetch_completion(usb_handle& h) {
  std::array<std::uint8_t, 8> b{};
  REQUIRE(h.control(0xC0, 0xF0, 0, 0, std::as_writable_bytes(std::span(b)), 5000ms).status == usb_status::ok);
  completion c;
  std::memcpy(&c.data, b.data(), 4);
  c.status = b[4] >> 5;
  c.return_status = b[7];
  return c;
}

inline std::uint64_t config_address(unsigned bus, unsigned dev, unsigned fn, unsigned reg) {
  return std::uint64_t(bus) << 24 | dev << 19 | fn << 16 | (reg & 0xFFF);
}

// A config read of `size` bytes as the reference's pcie_cfg_req issues it: Type 1 whenever bus > 0.
inline completion config_read(usb_handle& h, unsigned bus, unsigned reg, unsigned size = 4, unsigned dev = 0,
                              unsigned fn = 0, bool force_type0 = false) {
  const std::uint8_t be = std::uint8_t(((1u << size) - 1) << (reg & 3));
  const std::uint8_t fmt = bus > 0 && !force_type0 ? 0x05 : 0x04;
  REQUIRE(send_tlp(h, fmt, be, config_address(bus, dev, fn, reg) & ~3ull, 0).status == usb_status::ok);
  completion c = fetch_completion(h);
  c.data >>= 8 * (reg & 3);
  if (size < 4) c.data &= (1u << (8 * size)) - 1;
  return c;
}

inline completion config_write(usb_handle& h, unsigned bus, unsigned reg, std::uint32_t value, unsigned size = 4) {
  const std::uint8_t be = std::uint8_t(((1u << size) - 1) << (reg & 3));
  const std::uint8_t fmt = bus > 0 ? 0x45 : 0x44;
  REQUIRE(send_tlp(h, fmt, be, config_address(bus, 0, 0, reg) & ~3ull, value << (8 * (reg & 3))).status ==
          usb_status::ok);
  return fetch_completion(h);
}

// A streaming memory write (0xF0 mode 1 + one bulk OUT) or read (mode 2 + one bulk IN).
inline transfer_result memory_write(usb_handle& h, std::uint64_t address, std::span<const std::byte> bytes,
                                    std::chrono::milliseconds timeout = 1000ms) {
  std::array<std::uint32_t, 3> words{std::uint32_t(address), std::uint32_t(address >> 32),
                                     std::uint32_t(bytes.size() / 4)};
  REQUIRE(vendor_out(h, 0xF0, 0x60 | 0x0F << 8, 1, std::as_writable_bytes(std::span(words)), 5000ms).status ==
          usb_status::ok);
  std::vector<std::byte> copy(bytes.begin(), bytes.end());
  return h.bulk(0x02, copy, timeout);
}

inline transfer_result memory_read(usb_handle& h, std::uint64_t address, std::span<std::byte> out,
                                   std::chrono::milliseconds timeout = 30000ms) {
  std::array<std::uint32_t, 3> words{std::uint32_t(address), std::uint32_t(address >> 32),
                                     std::uint32_t(out.size() / 4)};
  REQUIRE(vendor_out(h, 0xF0, 0x20 | 0x0F << 8, 2, std::as_writable_bytes(std::span(words)), 5000ms).status ==
          usb_status::ok);
  return h.bulk(0x81, out, timeout);
}

inline transfer_result write32(usb_handle& h, std::uint64_t address, std::uint32_t v) {
  return memory_write(h, address, std::as_bytes(std::span(&v, 1)));
}

inline std::uint32_t read32(usb_handle& h, std::uint64_t address) {
  std::uint32_t v = 0;
  REQUIRE(memory_read(h, address, std::as_writable_bytes(std::span(&v, 1))).status == usb_status::ok);
  return v;
}

// pci_setup_usb_bars' first step: bus numbers of the four bridge ports, windows, COMMAND.
inline void setup_bridge_buses(usb_handle& h) {
  for (unsigned b = 0; b < 4; ++b) {
    CHECK(config_write(h, b, 0x18, 0u | (b + 1) << 8 | 4u << 16, 4).status == 0);
    config_write(h, b, 0x20, std::uint32_t(nonpref_base >> 16), 2);
    config_write(h, b, 0x22, 0xFFFF, 2);
    config_write(h, b, 0x24, std::uint32_t(pref_base >> 16) & 0xFFFF, 2);
    config_write(h, b, 0x26, 0xFFFF, 2);
    config_write(h, b, 0x28, std::uint32_t(pref_base >> 32), 4);
    config_write(h, b, 0x2C, 0xFFFF'FFFF, 4);
    config_write(h, b, 0x04, 0x7, 1);  // IO | MEMORY | MASTER
  }
}

struct bar_info {
  std::uint64_t address = 0, size = 0;
};

// Its last steps: size each GPU memory BAR with all-ones, assign it from its window, then COMMAND.
inline std::array<bar_info, 6> assign_gpu_bars(usb_handle& h) {
  std::array<bar_info, 6> bars{};
  std::uint64_t windows[2] = {nonpref_base, pref_base};
  for (unsigned i = 0; i < 6; ++i) {
    const unsigned reg = 0x10 + 4 * i;
    const std::uint32_t type = config_read(h, 4, reg).data;
    if (type & 1) continue;  // I/O BAR
    const bool is64 = (type >> 1 & 3) == 2, prefetch = type & 8;
    config_write(h, 4, reg, 0xFFFF'FFFF);
    std::uint64_t probe = config_read(h, 4, reg).data & ~0xFull;
    if (is64) {
      config_write(h, 4, reg + 4, 0xFFFF'FFFF);
      probe |= std::uint64_t(config_read(h, 4, reg + 4).data) << 32;
    }
    std::uint64_t size = ~probe + 1;
    if (!is64) size &= 0xFFFF'FFFF;
    if (probe == 0) continue;  // not implemented
    std::uint64_t& window = windows[prefetch ? 1 : 0];
    bars[i] = {window, size};
    config_write(h, 4, reg, std::uint32_t(window));
    if (is64) config_write(h, 4, reg + 4, std::uint32_t(window >> 32));
    window += (size + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
    if (is64) ++i;
  }
  config_write(h, 4, 0x04, 0x7, 1);
  return bars;
}

// 0xF2: arm an SRAM write or read of `bytes` (a multiple of 512) at `slot`.
inline transfer_result arm_sram(usb_handle& h, bool read, unsigned slot, std::uint64_t bytes) {
  const auto sectors = std::uint16_t(bytes / 512);
  const auto slots = std::uint16_t((bytes + 16 * KiB - 1) / (16 * KiB));
  return vendor_out(h, 0xF2, std::uint16_t(sectors | (read ? 0x8000 : 0)), std::uint16_t(slot | slots << 8));
}

inline std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = std::byte(x >> 24);
  }
  return v;
}

}  // namespace tg::emu::usb::test
