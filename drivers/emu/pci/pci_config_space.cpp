// pci_config_space.cpp: the emulated GPU function's configuration space (see pci_config_space.hpp).
//
// Everything lives in bytes_ as software last wrote it, after a per-dword write mask; the BAR
// dwords and the ReBAR control are stored raw and shaped on read (size mask, type bits), so that
// a later ReBAR change re-shapes a BAR address that was written earlier, as hardware does.
#include <algorithm>
#include "drivers/emu/pci/pci_config_space.hpp"

#include <bit>

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::emu {

namespace {

// Type-0 header offsets (PCI Local Bus spec 3.0, section 6.1; pci_regs.h spells the same names).
constexpr std::uint32_t vendor_id_reg = 0x00, command_reg = 0x04, class_rev_reg = 0x08, header_reg = 0x0C;
constexpr std::uint32_t bar_base_reg = 0x10, subsystem_reg = 0x2C, cap_ptr_reg = 0x34, interrupt_reg = 0x3C;
constexpr std::uint32_t command_memory = 1u << 1, command_master = 1u << 2;

// BAR type bits: bit 0 = 0 memory, bits 2:1 = 2 for 64-bit, bit 3 prefetchable.
constexpr std::uint32_t bar0_type = 0x4 | 0x8;
constexpr std::uint32_t bar32_type = 0x0;

// Resizable BAR extended capability (PCIe base spec 7.8.6; pci_regs.h PCI_EXT_CAP_ID_REBAR = 0x15).
constexpr std::uint32_t rebar_reg = 0x100, rebar_cap_reg = 0x104, rebar_ctrl_reg = 0x108;
constexpr std::uint32_t rebar_header = 0x15 | 1u << 16;  // version 1, next capability 0
constexpr std::uint32_t rebar_size_shift = 8, rebar_size_mask = 0x1Fu << rebar_size_shift;
constexpr std::uint32_t rebar_ctrl_fixed = 1u << 5;  // bits 7:5: one resizable BAR; bits 2:0: BAR 0

std::uint64_t size_log2_mib(std::uint64_t bytes) { return std::bit_width(bytes >> 20) - 1; }

void check_bar_size(const char* what, std::uint64_t bytes) {
  if (bytes < 16 || !std::has_single_bit(bytes))
    throw usage_error(str("emu pci: ", what, " of ", bytes, " bytes is not a power of two of at least 16 bytes"));
}

// Which bits of each dword software may change; the rest keep their reset value.
std::uint32_t write_mask(std::uint32_t dword_offset) {
  switch (dword_offset) {
    case vendor_id_reg: case class_rev_reg: case subsystem_reg: case cap_ptr_reg: return 0;
    case command_reg: return 0x0000'07FF;    // COMMAND; STATUS reads 0 and ignores writes
    case header_reg: return 0x0000'FFFF;     // cache line size and latency timer
    case interrupt_reg: return 0x0000'00FF;  // interrupt line; pin and the rest are read-only
    case rebar_reg: case rebar_cap_reg: return 0;
    case rebar_ctrl_reg: return rebar_size_mask;
    default: return 0xFFFF'FFFF;
  }
}

}  // namespace

pci_config_space::pci_config_space(const pci_function_config& config) : config_(config) {
  if (config.vram_bytes < (1ull << 20))
    throw usage_error(str("emu pci: VRAM of ", config.vram_bytes, " bytes is below the 1 MiB a BAR0 needs"));
  check_bar_size("BAR0 initial size", config.bar0_initial_bytes);
  check_bar_size("BAR2 (doorbells)", config.doorbell_bytes);
  check_bar_size("BAR5 (MMIO)", config.mmio_bytes);
  if (config.bar0_initial_bytes < (1ull << 20))
    throw usage_error(str("emu pci: BAR0 initial size ", config.bar0_initial_bytes, " is below ReBAR's 1 MiB"));

  auto put32 = [this](std::uint32_t offset, std::uint32_t v) {
    for (unsigned i = 0; i < 4; ++i) bytes_[offset + i] = std::uint8_t(v >> (8 * i));
  };
  put32(vendor_id_reg, std::uint32_t(config.device_id) << 16 | config.vendor_id);
  put32(class_rev_reg, 0x03'0000u << 8 | 0xC0);  // class 03 (display), subclass 00 (VGA), revision 0xC0
  put32(subsystem_reg, std::uint32_t(config.device_id) << 16 | config.vendor_id);
  put32(interrupt_reg, 1u << 8);  // INTA#

  // ReBAR sizes: every power of two from the initial size up to VRAM rounded up to one, so the
  // largest BAR covers all of VRAM (a 12 GiB card gets a 16 GiB BAR, as real cards do).
  const std::uint64_t largest = std::bit_ceil(config.vram_bytes);
  const std::uint64_t initial = std::min(config.bar0_initial_bytes, largest);
  std::uint32_t supported = 0;
  for (std::uint64_t s = initial; s <= largest; s <<= 1) supported |= 1u << (size_log2_mib(s) + 4);
  put32(rebar_reg, rebar_header);
  put32(rebar_cap_reg, supported);
  put32(rebar_ctrl_reg, rebar_ctrl_fixed | std::uint32_t(size_log2_mib(initial)) << rebar_size_shift);
  std::copy_n(bytes_.begin(), power_on_header_.size(), power_on_header_.begin());
}

void pci_config_space::reset_header() {
  std::copy(power_on_header_.begin(), power_on_header_.end(), bytes_.begin());
}

namespace {

void check_access(std::uint32_t offset, unsigned bytes) {
  if ((bytes != 1 && bytes != 2 && bytes != 4) || offset % bytes != 0 || offset + bytes > 4096)
    throw usage_error(str("emu pci: config access of ", bytes, " bytes at ", hex{offset},
                          " is not a naturally aligned 1, 2 or 4-byte access inside the 4 KiB config space"));
}

}  // namespace

std::uint32_t pci_config_space::raw32(std::uint32_t dword_offset) const {
  std::uint32_t v = 0;
  for (unsigned i = 0; i < 4; ++i) v |= std::uint32_t(bytes_[dword_offset + i]) << (8 * i);
  return v;
}

std::uint32_t pci_config_space::shaped32(std::uint32_t dword_offset) const {
  const std::uint32_t raw = raw32(dword_offset);
  if (dword_offset < bar_base_reg || dword_offset >= bar_base_reg + 6 * 4) return raw;
  // A BAR reads back the written address with the bits below its size cleared, plus its type.
  switch ((dword_offset - bar_base_reg) / 4) {
    case 0: return (raw & std::uint32_t(~(bar_size(0) - 1)) & ~0xFu) | bar0_type;
    case 1: return raw & std::uint32_t(~(bar_size(0) - 1) >> 32);
    case 2: return (raw & std::uint32_t(~(bar_size(2) - 1)) & ~0xFu) | bar32_type;
    case 5: return (raw & std::uint32_t(~(bar_size(5) - 1)) & ~0xFu) | bar32_type;
    default: return 0;  // BARs 3 and 4 are not implemented: sizing reads 0
  }
}

std::uint32_t pci_config_space::read(std::uint32_t offset, unsigned bytes) const {
  check_access(offset, bytes);
  const std::uint32_t dword = shaped32(offset & ~3u) >> (8 * (offset & 3));
  return bytes == 4 ? dword : dword & ((1u << (8 * bytes)) - 1);
}

void pci_config_space::write(std::uint32_t offset, std::uint32_t value, unsigned bytes) {
  check_access(offset, bytes);
  const std::uint32_t at = offset & ~3u, shift = 8 * (offset & 3);
  const std::uint32_t lanes = (bytes == 4 ? 0xFFFF'FFFFu : (1u << (8 * bytes)) - 1) << shift;
  const std::uint32_t mask = lanes & write_mask(at);
  const std::uint32_t old = raw32(at);
  std::uint32_t next = (old & ~mask) | ((value << shift) & mask);
  if (at == rebar_ctrl_reg && !rebar_size_supported((next & rebar_size_mask) >> rebar_size_shift))
    next = old;  // an unsupported size is undefined on hardware; keeping the current one is safest
  for (unsigned i = 0; i < 4; ++i) bytes_[at + i] = std::uint8_t(next >> (8 * i));
}

bool pci_config_space::rebar_size_supported(std::uint32_t log2_mib) const {
  return log2_mib < 28 && (raw32(rebar_cap_reg) >> (log2_mib + 4) & 1);
}

std::uint64_t pci_config_space::bar_size(unsigned index) const {
  switch (index) {
    case 0: return (1ull << 20) << ((raw32(rebar_ctrl_reg) & rebar_size_mask) >> rebar_size_shift);
    case 2: return config_.doorbell_bytes;
    case 5: return config_.mmio_bytes;
    default: return 0;
  }
}

std::uint64_t pci_config_space::bar_address(unsigned index) const {
  const std::uint32_t at = bar_base_reg + 4 * index;
  switch (index) {
    case 0: return (std::uint64_t(shaped32(at + 4)) << 32 | shaped32(at)) & ~0xFull;
    case 2: case 5: return shaped32(at) & ~0xFu;
    default: return 0;
  }
}

bool pci_config_space::memory_enabled() const { return raw32(command_reg) & command_memory; }
bool pci_config_space::bus_master() const { return raw32(command_reg) & command_master; }

std::optional<bar_hit> pci_config_space::decode(std::uint64_t bus_address) const {
  if (!memory_enabled()) return std::nullopt;
  for (unsigned index : {0u, 2u, 5u}) {
    const std::uint64_t base = bar_address(index), size = bar_size(index);
    if (base != 0 && bus_address >= base && bus_address - base < size) return bar_hit{index, bus_address - base};
  }
  return std::nullopt;
}

}  // namespace tg::emu
