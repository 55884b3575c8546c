// sram_windows.cpp: the bridge's SRAM and buffer windows (see sram_windows.hpp).
#include "drivers/emu/usb/sram_windows.hpp"

#include <array>
#include <cstring>
#include <utility>

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::emu::usb {

sram_windows::sram_windows()
    : sram_(sram_window.size), sys_buf_(sys_buf_window.size), cq_buf_(cq_buf_window.size) {}

std::array<std::pair<const window*, std::vector<std::byte>*>, 3> sram_windows::regions() {
  return {{{&sram_window, &sram_}, {&sys_buf_window, &sys_buf_}, {&cq_buf_window, &cq_buf_}}};
}

std::vector<std::byte>* sram_windows::find_bus(std::uint64_t bus_address, std::uint64_t bytes,
                                               std::uint64_t& offset) {
  for (const auto& [w, mem] : regions()) {
    if (bus_address >= w->bus && bus_address - w->bus <= w->size && bytes <= w->size - (bus_address - w->bus)) {
      offset = bus_address - w->bus;
      return mem;
    }
  }
  return nullptr;
}

std::vector<std::byte>* sram_windows::find_xdata(std::uint16_t xdata, std::uint64_t& offset) {
  for (const auto& [w, mem] : regions()) {
    if (xdata >= w->xdata && std::uint32_t(xdata - w->xdata) < w->xdata_size) {
      offset = xdata - w->xdata;
      return mem;
    }
  }
  return nullptr;
}

void sram_windows::read(std::uint64_t bus_address, std::span<std::byte> out) {
  std::lock_guard lock(mutex_);
  std::uint64_t offset = 0;
  std::vector<std::byte>* mem = find_bus(bus_address, out.size(), offset);
  if (mem == nullptr)
    throw device_error(str("emu usb bridge: GPU read of ", out.size(), " bytes at bus address ", hex{bus_address},
                           " is outside the bridge's windows (SRAM 0x200000, sys_buf 0x820000, cq_buf 0x822000)"));
  if (!out.empty()) std::memcpy(out.data(), mem->data() + offset, out.size());
  gpu_read_bytes_ += out.size();
}

void sram_windows::write(std::uint64_t bus_address, std::span<const std::byte> in) {
  {
    std::lock_guard lock(mutex_);
    std::uint64_t offset = 0;
    std::vector<std::byte>* mem = find_bus(bus_address, in.size(), offset);
    if (mem == nullptr)
      throw device_error(str("emu usb bridge: GPU write of ", in.size(), " bytes at bus address ", hex{bus_address},
                             " is outside the bridge's windows (SRAM 0x200000, sys_buf 0x820000, cq_buf 0x822000)"));
    if (!in.empty()) std::memcpy(mem->data() + offset, in.data(), in.size());
    gpu_write_bytes_ += in.size();
    if (mem == &sram_) gpu_sram_write_bytes_ += in.size();
    // Any write touching the byte at cq_buf + 12 releases: SDMA's WRITE of a dword there does.
    const bool releases = bus_address <= release_bus_address && release_bus_address - bus_address < in.size();
    if (!releases) return;
    ++releases_;
  }
  released_.notify_all();
}

bool sram_windows::read_xdata(std::uint16_t xdata, std::byte& out) {
  std::lock_guard lock(mutex_);
  std::uint64_t offset = 0;
  std::vector<std::byte>* mem = find_xdata(xdata, offset);
  if (mem == nullptr) return false;
  out = (*mem)[offset];
  return true;
}

bool sram_windows::write_xdata(std::uint16_t xdata, std::byte value) {
  std::lock_guard lock(mutex_);
  std::uint64_t offset = 0;
  std::vector<std::byte>* mem = find_xdata(xdata, offset);
  if (mem == nullptr) return false;
  (*mem)[offset] = value;
  return true;
}

void sram_windows::write_sram(std::uint64_t offset, std::span<const std::byte> in) {
  std::lock_guard lock(mutex_);
  if (offset > sram_.size() || in.size() > sram_.size() - offset) TG_UNREACHABLE("SRAM write range unchecked");
  if (!in.empty()) std::memcpy(sram_.data() + offset, in.data(), in.size());
}

void sram_windows::read_sram(std::uint64_t offset, std::span<std::byte> out) {
  std::lock_guard lock(mutex_);
  if (offset > sram_.size() || out.size() > sram_.size() - offset) TG_UNREACHABLE("SRAM read range unchecked");
  if (!out.empty()) std::memcpy(out.data(), sram_.data() + offset, out.size());
}

std::uint64_t sram_windows::releases() const {
  std::lock_guard lock(mutex_);
  return releases_;
}

std::uint64_t sram_windows::cancels() const {
  std::lock_guard lock(mutex_);
  return cancels_;
}

release_wait sram_windows::wait_for_release(std::uint64_t armed_at, std::uint64_t cancels_at,
                                            std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::unique_lock lock(mutex_);
  auto ready = [&] { return releases_ > armed_at || cancels_ != cancels_at; };
  if (deadline) {
    if (!released_.wait_until(lock, *deadline, ready)) return release_wait::timed_out;
  } else {
    released_.wait(lock, ready);
  }
  // A release that raced a reset still counts: the data is in the SRAM.
  return releases_ > armed_at ? release_wait::released : release_wait::cancelled;
}

void sram_windows::cancel() {
  {
    std::lock_guard lock(mutex_);
    ++cancels_;
  }
  released_.notify_all();
}

std::uint64_t sram_windows::gpu_read_bytes() const {
  std::lock_guard lock(mutex_);
  return gpu_read_bytes_;
}

std::uint64_t sram_windows::gpu_sram_write_bytes() const {
  std::lock_guard lock(mutex_);
  return gpu_sram_write_bytes_;
}

std::uint64_t sram_windows::gpu_write_bytes() const {
  std::lock_guard lock(mutex_);
  return gpu_write_bytes_;
}

}  // namespace tg::emu::usb
