// pcie_enumerate.cpp: bus numbering, bridge windows, Resizable BAR and BAR assignment behind the
// ASM2464 (tinygrad/runtime/support/system.py: System.pci_setup_usb_bars).
//
//   auto bars = enumerate_pcie(dev);
//
// Not thread-safe.
#include "runtime/transport/usb/pcie_enumerate.hpp"

#include <bit>

#include <tg/core/error.hpp>

namespace tg::transport::usb {
namespace {

constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

void setup_bridge(usb_device& dev, unsigned bus, const tlp_retry_policy& retry) {
  // Primary, secondary and subordinate bus numbers in one write: the bridge must never see them
  // half-updated (pci_setup_usb_bars writes all three at once too).
  config_write(dev, bus, pci_reg::primary_bus, (bus + 1) << 8 | gpu_bus << 16, 4, retry);
  config_write(dev, bus, pci_reg::memory_base, std::uint32_t(memory_window_base >> 16) & 0xFFFF, 2, retry);
  config_write(dev, bus, pci_reg::memory_limit, 0xFFFF, 2, retry);
  config_write(dev, bus, pci_reg::pref_memory_base, std::uint32_t(prefetch_window_base >> 16) & 0xFFFF, 2, retry);
  config_write(dev, bus, pci_reg::pref_memory_limit, 0xFFFF, 2, retry);
  config_write(dev, bus, pci_reg::pref_base_upper32, std::uint32_t(prefetch_window_base >> 32), 4, retry);
  config_write(dev, bus, pci_reg::pref_limit_upper32, 0xFFFFFFFF, 4, retry);
  config_write(dev, bus, pci_reg::command, pci_reg::command_io_memory_master, 1, retry);
}

// Grows every BAR the Resizable BAR capability controls to its largest supported size, so BAR0
// covers all of VRAM (as pci_setup_usb_bars does).
void resize_bars(usb_device& dev, const tlp_retry_policy& retry) {
  unsigned offset = pci_reg::ext_cap_start;
  for (int guard = 0; guard < 64 && offset >= pci_reg::ext_cap_start; ++guard) {
    std::uint32_t header = config_read(dev, gpu_bus, offset, 4, retry);
    if (header == 0 || header == 0xFFFFFFFF) return;
    if ((header & 0xFFFF) == pci_reg::ext_cap_id_rebar) {
      std::uint32_t sizes = config_read(dev, gpu_bus, offset + 4, 4, retry) >> 4;
      if (sizes != 0) {
        std::uint32_t control = config_read(dev, gpu_bus, offset + 8, 4, retry);
        std::uint32_t largest = std::uint32_t(std::bit_width(sizes)) - 1;
        config_write(dev, gpu_bus, offset + 8, (control & ~(0x1Fu << 8)) | largest << 8, 4, retry);
      }
    }
    offset = header >> 20;
  }
}

struct windows {
  std::uint64_t memory = memory_window_base;
  std::uint64_t prefetch = prefetch_window_base;
};

// Sizes the BAR at `index` (one or two slots) and gives it an address; returns the slots used.
unsigned assign_bar(usb_device& dev, unsigned index, windows& w, bar_region& out, const tlp_retry_policy& retry) {
  unsigned reg = pci_reg::bar0 + 4 * index;
  std::uint32_t type = config_read(dev, gpu_bus, reg, 4, retry);
  if (type & 1) return 1;  // I/O space: not used over USB
  config_write(dev, gpu_bus, reg, 0xFFFFFFFF, 4, retry);
  std::uint64_t probe = config_read(dev, gpu_bus, reg, 4, retry);
  bool is_64bit = (type >> 1 & 3) == 2 && index < 5;
  if (is_64bit) {
    config_write(dev, gpu_bus, reg + 4, 0xFFFFFFFF, 4, retry);
    probe |= std::uint64_t(config_read(dev, gpu_bus, reg + 4, 4, retry)) << 32;
  }
  std::uint64_t mask = is_64bit ? ~std::uint64_t(0) : 0xFFFFFFFFull;
  std::uint64_t size = (~(probe & ~std::uint64_t(0xF)) + 1) & mask;
  if ((probe & ~std::uint64_t(0xF) & mask) == 0) size = 0;  // all address bits read 0: no BAR
  if (size == 0) return is_64bit ? 2 : 1;
  bool prefetchable = type & 8;
  // A 32-bit BAR cannot reach the prefetchable window above 4 GiB, so it takes the other one.
  std::uint64_t& next = prefetchable && is_64bit ? w.prefetch : w.memory;
  // BARs decode naturally aligned addresses; the reference's order gives that for free with one
  // large BAR first, the alignment keeps it true for any order.
  std::uint64_t address = round_up(next, size);
  config_write(dev, gpu_bus, reg, std::uint32_t(address), 4, retry);
  if (is_64bit) config_write(dev, gpu_bus, reg + 4, std::uint32_t(address >> 32), 4, retry);
  next = address + round_up(size, bar_granule);
  out = {address, size, is_64bit, prefetchable};
  return is_64bit ? 2 : 1;
}

}  // namespace

std::array<bar_region, 6> enumerate_pcie(usb_device& dev, const tlp_retry_policy& retry) {
  for (unsigned bus = 0; bus < bridge_bus_count; ++bus) setup_bridge(dev, bus, retry);
  resize_bars(dev, retry);
  std::array<bar_region, 6> bars{};
  windows w;
  for (unsigned index = 0; index < 6;) index += assign_bar(dev, index, w, bars[index], retry);
  config_write(dev, gpu_bus, pci_reg::command, pci_reg::command_io_memory_master, 1, retry);
  return bars;
}

}  // namespace tg::transport::usb
