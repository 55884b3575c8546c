// pcie_enumerate.hpp: numbers the buses behind the bridge and assigns the GPU's BARs, as nothing
// else on the far side of the USB link will (tinygrad/runtime/support/system.py:
// System.pci_setup_usb_bars).
//
//   std::array<bar_region, 6> bars = enumerate_pcie(dev);
//   bars[0].bus_address  // 0x8'0000'0000 for a prefetchable 64-bit VRAM BAR
//
// Order: bridge buses 0..3 (bus numbers, memory windows, COMMAND), the GPU's Resizable BAR to its
// largest size, BAR sizing and assignment, the GPU's COMMAND. Not thread-safe.
#pragma once
#include <array>
#include <cstdint>

#include "runtime/transport/transport.hpp"
#include "runtime/transport/usb/tlp.hpp"
#include "runtime/transport/usb/usb_device.hpp"

namespace tg::transport::usb {

inline constexpr unsigned gpu_bus = 4;
inline constexpr unsigned bridge_bus_count = 4;  // buses 0..3, device 0 function 0 each
inline constexpr std::uint64_t memory_window_base = 0x1000'0000;       // non-prefetchable
inline constexpr std::uint64_t prefetch_window_base = 0x8'0000'0000;   // prefetchable
inline constexpr std::uint64_t bar_granule = 2 * 1024 * 1024;          // windows advance by this

// PCI configuration space fields (include/uapi/linux/pci_regs.h).
namespace pci_reg {
inline constexpr unsigned command = 0x04;
inline constexpr unsigned bar0 = 0x10;
inline constexpr unsigned primary_bus = 0x18;
inline constexpr unsigned memory_base = 0x20, memory_limit = 0x22;
inline constexpr unsigned pref_memory_base = 0x24, pref_memory_limit = 0x26;
inline constexpr unsigned pref_base_upper32 = 0x28, pref_limit_upper32 = 0x2C;
inline constexpr unsigned ext_cap_start = 0x100;
inline constexpr unsigned ext_cap_id_rebar = 0x15;
inline constexpr std::uint32_t command_io_memory_master = 0x7;  // PCI_COMMAND_IO | _MEMORY | _MASTER
}  // namespace pci_reg

// Returns the GPU's BARs by index (a 64-bit BAR fills its low index; size 0 where none).
std::array<bar_region, 6> enumerate_pcie(usb_device& dev, const tlp_retry_policy& retry = {});

}  // namespace tg::transport::usb
