// pci_config_space.hpp: the PCI configuration space of the emulated GPU function (4 KiB, type-0
// header), as the emulated PCI host (fake sysfs `config`) and the emulated ASM2464 bridge (config
// TLPs to bus 4) both serve it.
//
// What a driver can observe (tinygrad/runtime/support/usb.py; Linux Documentation/PCI/sysfs-pci.rst):
//   - vendor 0x1002 and the device id; class code 0x030000 (VGA); COMMAND (IO, MEMORY, MASTER);
//   - BARs: 0 = VRAM (64-bit, prefetchable), 2 = doorbells (32-bit), 5 = MMIO (32-bit). Sizing
//     works as on hardware: writing all-ones and reading back gives ~(size - 1) | type bits, in
//     both dwords of a 64-bit BAR; an address written afterwards is kept (low bits masked);
//   - a Resizable BAR extended capability at 0x100 (id 0x15, version 1, next 0) for BAR0: the
//     capability dword lists the supported sizes (bit n + 4 = 2^n MiB), the control dword's bits
//     12:8 select the current size, which changes what BAR0 sizing reports.
// Accesses are 1, 2 or 4 bytes, naturally aligned (usage_error otherwise); bytes beyond the
// defined registers read back what was written.
//
//   tg::emu::pci_config_space cs({.device_id = 0x7550, .vram_bytes = 512ull << 20});
//   cs.write(0x10, 0xFFFFFFFF, 4);  std::uint32_t lo = cs.read(0x10, 4);   // sizing BAR0
//   std::optional<tg::emu::bar_hit> hit = cs.decode(bus_address);         // which BAR a TLP hits
//
// Not thread-safe: the emulated bus owning it serialises accesses.
#pragma once
#include <array>
#include <cstdint>
#include <optional>

namespace tg::emu {

struct pci_function_config {
  std::uint16_t vendor_id = 0x1002;
  std::uint16_t device_id = 0x744C;            // RX 7900 XTX (gfx1100); 0x7590 is an RX 9060 (gfx1200)
  std::uint64_t vram_bytes = 512ull << 20;     // BAR0's largest ReBAR size is this
  std::uint64_t bar0_initial_bytes = 256ull << 20;  // before ReBAR: the usual small BAR
  std::uint64_t doorbell_bytes = 0x2000;       // BAR2
  std::uint64_t mmio_bytes = 2ull << 20;       // BAR5
};

struct bar_hit {
  unsigned index;         // 0, 2 or 5
  std::uint64_t offset;   // bytes from the BAR start
};

class pci_config_space {
 public:
  explicit pci_config_space(const pci_function_config& config);

  std::uint32_t read(std::uint32_t offset, unsigned bytes) const;
  void write(std::uint32_t offset, std::uint32_t value, unsigned bytes);

  // The BAR's size now (BAR0 follows the ReBAR control) and the address software assigned
  // (0 until it has been written).
  std::uint64_t bar_size(unsigned index) const;
  std::uint64_t bar_address(unsigned index) const;
  bool memory_enabled() const;   // COMMAND.MEMORY: memory TLPs are decoded only when set
  bool bus_master() const;       // COMMAND.MASTER
  // Which BAR a memory TLP at bus_address hits, if any (needs memory_enabled()).
  std::optional<bar_hit> decode(std::uint64_t bus_address) const;

  const pci_function_config& config() const { return config_; }
  // The type-0 header (bytes 0x00..0x3F: COMMAND, BARs, ...) back to its power-on values, as a
  // mode-1 reset leaves it; the extended capabilities (ReBAR) keep their state here.
  void reset_header();

 private:
  std::uint32_t raw32(std::uint32_t dword_offset) const;     // as stored
  std::uint32_t shaped32(std::uint32_t dword_offset) const;  // as a read returns it (BARs masked)
  bool rebar_size_supported(std::uint32_t log2_mib) const;

  pci_function_config config_;
  std::array<std::uint8_t, 4096> bytes_{};
  std::array<std::uint8_t, 64> power_on_header_{};
};

}  // namespace tg::emu
