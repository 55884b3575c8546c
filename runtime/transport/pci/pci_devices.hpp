// pci_devices.hpp: which PCI functions are GPUs tg drives (the ids tinygrad/runtime/ops_amd.py:
// PCIIface probes), and discovery over pci_os.
//
// Only the listed AMD device ids are accepted (vendor 0x1002, exact device id): an unknown AMD
// display function may need a gfx target tg has no code for. The detail says what the card is
// and which kernel driver holds it, because opening fails while one does.
//
//   posix_pci_os os;
//   for (const device_entry& e : list_pci_devices(os)) std::printf("%s %s\n", e.name.c_str(), e.detail.c_str());
//   // pci:0000:03:00.0 Navi31 RX 7900 XT/XTX (gfx1100), driver amdgpu bound
//
// Thread-safe (reads only).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/transport/pci/pci_os.hpp"
#include "runtime/transport/transport.hpp"

namespace tg::transport::pci {

constexpr std::uint16_t amd_vendor_id = 0x1002;

struct known_gpu {
  std::uint16_t device_id;
  const char* gfx_target;  // the LLVM processor name
  const char* name;        // chip and marketing name
};

// gfx11 / gfx12 parts from PCIIface's probe list (tinygrad/runtime/ops_amd.py) without its gfx9 entries.
std::span<const known_gpu> known_gpus();
// The entry for an AMD device id, or nullptr.
const known_gpu* find_known_gpu(std::uint16_t vendor_id, std::uint16_t device_id);

// Known GPUs present, sorted by bus id (which sorts by domain, bus, device, function: sysfs
// spells them as fixed-width lowercase hex). Functions whose vendor or device file cannot be
// read are skipped.
std::vector<device_entry> list_pci_devices(pci_os& os);

// "pci:" + bus id: device_transport::name() and device_entry::name.
std::string pci_device_name(const std::string& bus);

}  // namespace tg::transport::pci
