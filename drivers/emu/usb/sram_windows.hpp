// sram_windows.hpp: the bridge memory both sides reach (tinygrad/runtime/support/usb.py; tinygrad's mock GPU (test/mockgpu/amd)): the host through XDATA
// (0xE4/0xE5, and 0xF2 bulk streams into the SRAM), the GPU through PCIe bus addresses.
//
//   XDATA 0xF000 <-> bus 0x200000  512 KiB SRAM (32 slots of 16 KiB; XDATA reaches its first 4 KiB)
//   XDATA 0xA000 <-> bus 0x820000  4 KiB  sys_buf (copy-in drain fence at +0x800)
//   XDATA 0xB800 <-> bus 0x822000  4 KiB  cq_buf: a GPU write covering +12 releases an armed read
//
// It is the GPU's system_bus: the GPU's queue engines read and write it under the gpu's lock.
// The host side waits for a release here without holding any other lock.
//
//   sram_windows w;
//   w.write_sram(0, bytes);                          // a 0xF2 bulk OUT landed
//   w.bus_read(0x200000, out);                        // SDMA reads the bounce buffer
//   std::uint64_t seen = w.releases();                // when a read is armed
//   w.wait_for_release(seen, cancel, deadline);       // until the GPU writes 0x82200C
//
// Thread-safe: one small lock of its own; it never calls anything else while holding it.
#pragma once
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "drivers/emu/system_bus.hpp"

namespace tg::emu::usb {

struct window {
  std::uint16_t xdata;     // first XDATA address
  std::uint64_t bus;       // first PCIe bus address
  std::uint64_t size;      // bytes behind it
  std::uint32_t xdata_size;  // how much of it XDATA reaches (16-bit XDATA ends at 0xFFFF)
};

inline constexpr std::uint64_t sram_bytes = 512 * 1024;
inline constexpr std::uint64_t sram_slot_bytes = 16 * 1024;
inline constexpr window sram_window{0xF000, 0x200000, sram_bytes, 0x1000};
inline constexpr window sys_buf_window{0xA000, 0x820000, 0x1000, 0x1000};
inline constexpr window cq_buf_window{0xB800, 0x822000, 0x1000, 0x1000};
inline constexpr std::uint64_t release_bus_address = 0x822000 + 12;  // cq_buf + 12 (tinygrad/runtime/support/usb.py)

enum class release_wait { released, timed_out, cancelled };

class sram_windows final : public emu::system_bus {
 public:
  sram_windows();

  // ---- the GPU side (system_bus): device_error naming the address outside every window.
  void read(std::uint64_t bus_address, std::span<std::byte> out) override;
  void write(std::uint64_t bus_address, std::span<const std::byte> in) override;

  // ---- the host side. XDATA bytes inside a window; false when `xdata` is in none.
  bool read_xdata(std::uint16_t xdata, std::byte& out);
  bool write_xdata(std::uint16_t xdata, std::byte value);
  // The SRAM by offset (0xF2 streams); the caller checked the range.
  void write_sram(std::uint64_t offset, std::span<const std::byte> in);
  void read_sram(std::uint64_t offset, std::span<std::byte> out);

  // ---- armed-read gating. releases() counts GPU writes covering cq_buf + 12; a read armed
  // when it was n is released once it passes n. cancel() wakes every waiter (a USB reset).
  std::uint64_t releases() const;
  std::uint64_t cancels() const;
  release_wait wait_for_release(std::uint64_t armed_at, std::uint64_t cancels_at,
                                std::optional<std::chrono::steady_clock::time_point> deadline);
  void cancel();

  std::uint64_t gpu_read_bytes() const;
  std::uint64_t gpu_write_bytes() const;
  std::uint64_t gpu_sram_write_bytes() const;  // of those, into the SRAM data area (0x200000)

 private:
  std::array<std::pair<const window*, std::vector<std::byte>*>, 3> regions();
  // The window holding [bus_address, +bytes) and the offset into it; nullptr when none does.
  std::vector<std::byte>* find_bus(std::uint64_t bus_address, std::uint64_t bytes, std::uint64_t& offset);
  std::vector<std::byte>* find_xdata(std::uint16_t xdata, std::uint64_t& offset);

  mutable std::mutex mutex_;
  std::condition_variable released_;
  std::vector<std::byte> sram_, sys_buf_, cq_buf_;  // guarded by mutex_
  std::uint64_t releases_ = 0, cancels_ = 0;
  std::uint64_t gpu_read_bytes_ = 0, gpu_write_bytes_ = 0, gpu_sram_write_bytes_ = 0;
};

}  // namespace tg::emu::usb
