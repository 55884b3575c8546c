// system_bus.hpp: memory outside the emulated GPU that it reaches over PCIe: the GMMU's system
// pages (amdgpu_vm.h; tinygrad/runtime/support/am/amdev.pyYS bit) and bus addresses the GPU writes to directly.
//
// Whoever emulates the bus implements it: the emulated PCI host (host pages behind a fake
// /proc/self/pagemap, Linux Documentation/PCI/sysfs-pci.rst; tinygrad's mock GPU (test/mockgpu/amd)) or the emulated ASM2464 bridge (its SRAM windows at
// PCIe 0x200000, 0x820000 and 0x822000, tinygrad/runtime/support/usb.py; tinygrad's mock GPU (test/mockgpu/amd); a write to 0x82200C releases an armed
// read). The gpu calls it from its queue engines, under the gpu's lock: an implementation must
// never call back into the gpu, and must not wait for anything that needs the gpu's lock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace tg::emu {

class system_bus {
 public:
  virtual ~system_bus() = default;
  // Throws device_error naming the address when nothing answers there; the gpu reports that as
  // a fault of the engine that made the access.
  virtual void read(std::uint64_t bus_address, std::span<std::byte> out) = 0;
  virtual void write(std::uint64_t bus_address, std::span<const std::byte> in) = 0;
};

}  // namespace tg::emu
