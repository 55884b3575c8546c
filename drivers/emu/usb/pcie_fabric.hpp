// pcie_fabric.hpp: the PCIe side of the emulated ASM2464: its four bridge ports (buses 0..3),
// the link to the GPU and the GPU's function on bus 4 (tinygrad/runtime/support/usb.py).
//
// Config TLPs go to a bridge port's type-1 header or the GPU's pci_config_space; anything else
// (another device or function, a Type 0 to a bus other than 0, a bus no bridge forwards to)
// completes with Unsupported Request. Memory TLPs are decoded by the GPU's BARs (which needs
// COMMAND.MEMORY): BAR0 is VRAM, BAR2 the doorbells (64-bit stores; a 32-bit half is merged
// with the other half's current value), BAR5 the registers, dword by dword. With the link down
// nothing past bus 3 answers.
//
//   pcie_fabric f(gpu, function_config, true);
//   f.set_link_up(true);
//   tlp_completion c = f.config_read({.type1 = true, .bus = 4, .reg = 0});   // c.data == 0x744C1002
//   f.memory_write(bar5 + 4 * 0xC040, bytes);                            // SCRATCH_REG0
//
// Not thread-safe: the bridge calls it under its host lock. It calls into the gpu (which takes
// the gpu's lock), so that host lock must never be one the gpu's system_bus calls take.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "drivers/emu/gpu.hpp"
#include "drivers/emu/pci/pci_config_space.hpp"
#include "drivers/emu/usb/bridge_port.hpp"

namespace tg::emu::usb {

// Completion status codes (tinygrad/runtime/support/usb.py; tinygrad/runtime/support/am/amdev.pyxF0 IN byte 4 bits 7:5).
inline constexpr std::uint8_t completion_success = 0, completion_unsupported = 1;

struct config_target {
  bool type1 = false;
  std::uint8_t bus = 0, device = 0, function = 0;
  std::uint16_t reg = 0;  // dword-aligned byte offset, 0..0xFFC
};

struct tlp_completion {
  std::uint32_t data = 0;
  std::uint8_t status = completion_success;
  bool delivered = true;  // false: the link is down and no completion came back
};

class pcie_fabric {
 public:
  pcie_fabric(gpu& g, const pci_function_config& function, bool route_config_by_bus_numbers);

  void set_link_up(bool up) { link_up_ = up; }
  bool link_up() const { return link_up_; }

  tlp_completion config_read(const config_target& t);
  tlp_completion config_write(const config_target& t, std::uint8_t byte_enable, std::uint32_t value);

  // Whole dwords at a 4-byte aligned address. Return how many dwords nothing claimed (writes
  // dropped; reads of those dwords return all-ones, as a master abort does).
  std::uint64_t memory_write(std::uint64_t address, std::span<const std::byte> bytes);
  std::uint64_t memory_read(std::uint64_t address, std::span<std::byte> out);
  // One dword TLP with byte enables (0xF0 mode 0). false: nothing claimed it.
  bool memory_write_dword(std::uint64_t address, std::uint8_t byte_enable, std::uint32_t value);
  tlp_completion memory_read_dword(std::uint64_t address);

  const pci_config_space& gpu_config() const { return gpu_config_; }

 private:
  enum class route { bridge, gpu, none };
  route route_config(const config_target& t, unsigned& port) const;
  // The GPU BAR a memory TLP at `address` hits (nullopt with the link down or nothing there),
  // and how many of max_bytes from there that BAR (and, for BAR0, VRAM) holds.
  std::optional<bar_hit> decode(std::uint64_t address) const;
  std::uint64_t claimable_bytes(const bar_hit& hit, std::uint64_t max_bytes) const;
  void write_bar(const bar_hit& hit, std::span<const std::byte> bytes);
  void read_bar(const bar_hit& hit, std::span<std::byte> out);

  // A mode-1 reset of the GPU clears its config header (BARs unassigned, memory decoding off) until
  // the driver restores it (Linux amdgpu_device_load_pci_state); seen here at the next access.
  void follow_resets() const;

  gpu& gpu_;
  mutable pci_config_space gpu_config_;
  mutable std::uint64_t resets_seen_ = 0;
  std::array<bridge_port, 4> ports_;
  bool route_by_bus_numbers_;
  bool link_up_ = false;
};

}  // namespace tg::emu::usb
