// bridge_port.hpp: the type-1 (PCI-to-PCI bridge) config header of one of the ASM2464's own
// ports, buses 0..3 (tinygrad/runtime/support/usb.py). Software programs the bus numbers, memory windows and
// COMMAND; the bridge forwards config TLPs to the buses its secondary..subordinate range covers.
//
//   bridge_port p;
//   p.write(0x18, 0x00, 1); ... or p.write(0x18, 0x040100, 4);   // primary 0, secondary 1, subordinate 4
//   bool reaches_bus_4 = p.forwards(4);
//
// Identity: ASMedia's PCI vendor id 0x1B21 with device id 0x2464 (the reference never reads
// them; plausible values, not taken from a real part). No BARs, no capabilities.
// Not thread-safe: the fabric serialises accesses.
#pragma once
#include <array>
#include <cstdint>

namespace tg::emu::usb {

class bridge_port {
 public:
  bridge_port() {
    put(0x00, 0x1B21, 2);        // vendor
    put(0x02, 0x2464, 2);        // device
    put(0x08, 0x0604'0000, 4);   // class 06 (bridge), subclass 04 (PCI-to-PCI), revision 0
    put(0x0E, 0x01, 1);          // header type 1
  }

  // Any naturally aligned 1-, 2- or 4-byte access; read-only bytes ignore writes.
  std::uint32_t read(std::uint32_t offset, unsigned bytes) const {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < bytes; ++i) v |= std::uint32_t(bytes_[offset + i]) << (8 * i);
    return v;
  }
  void write(std::uint32_t offset, std::uint32_t value, unsigned bytes) {
    for (unsigned i = 0; i < bytes; ++i)
      if (is_writable(offset + i)) bytes_[offset + i] = std::uint8_t(value >> (8 * i));
  }

  std::uint8_t secondary_bus() const { return bytes_[0x19]; }
  std::uint8_t subordinate_bus() const { return bytes_[0x1A]; }
  bool forwards(unsigned bus) const { return secondary_bus() <= bus && bus <= subordinate_bus() && bus != 0; }

 private:
  // Writable: COMMAND/STATUS (0x04-0x07), cache line and latency (0x0C-0x0D), BIST (0x0F), the
  // bus numbers, I/O and memory windows (0x18-0x33) and interrupt/bridge control (0x3C-0x3F).
  // BARs (0x10-0x17) read 0, so sizing finds none; identity and the extended space are fixed.
  static bool is_writable(std::uint32_t offset) {
    return (offset >= 0x04 && offset < 0x08) || offset == 0x0C || offset == 0x0D || offset == 0x0F ||
           (offset >= 0x18 && offset < 0x34) || (offset >= 0x3C && offset < 0x40);
  }
  void put(std::uint32_t offset, std::uint32_t value, unsigned bytes) {
    for (unsigned i = 0; i < bytes; ++i) bytes_[offset + i] = std::uint8_t(value >> (8 * i));
  }

  std::array<std::uint8_t, 4096> bytes_{};
};

}  // namespace tg::emu::usb
