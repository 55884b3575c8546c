// pci_devices.cpp: the table of supported GPUs and sysfs discovery (see pci_devices.hpp).
#include "runtime/transport/pci/pci_devices.hpp"

#include <algorithm>

#include "runtime/transport/pci/pci_text.hpp"
#include <tg/core/error.hpp>

namespace tg::transport::pci {

namespace {

// Device ids from tinygrad/runtime/ops_amd.py: PCIIface (the reference probes these; names from
// Linux/PCI id knowledge).
constexpr known_gpu gpu_table[] = {
    {0x744C, "gfx1100", "Navi31 RX 7900 XT/XTX"},
    {0x747E, "gfx1101", "Navi32 RX 7800 XT / 7700 XT"},  // not in the reference's list; the PCI ID Repository (pci.ids)
    {0x7480, "gfx1102", "Navi33 RX 7600"},
    {0x7550, "gfx1201", "Navi48 RX 9070 XT"},
    {0x7551, "gfx1201", "Navi48 RX 9070"},
    {0x7590, "gfx1200", "Navi44 RX 9060 XT"},
};

std::optional<std::uint64_t> read_id(pci_os& os, const std::string& bus, const char* file) {
  try {
    return parse_hex(os.read_text(bus, file));
  } catch (const device_error&) {
    return std::nullopt;  // a function that vanished or hides its ids is simply not listed
  }
}

}  // namespace

std::span<const known_gpu> known_gpus() { return gpu_table; }

const known_gpu* find_known_gpu(std::uint16_t vendor_id, std::uint16_t device_id) {
  if (vendor_id != amd_vendor_id) return nullptr;
  for (const known_gpu& g : gpu_table)
    if (g.device_id == device_id) return &g;
  return nullptr;
}

std::string pci_device_name(const std::string& bus) { return "pci:" + bus; }

std::vector<device_entry> list_pci_devices(pci_os& os) {
  std::vector<std::string> buses = os.list_devices();
  std::sort(buses.begin(), buses.end());
  std::vector<device_entry> found;
  for (const std::string& bus : buses) {
    const std::optional<std::uint64_t> vendor = read_id(os, bus, "vendor");
    const std::optional<std::uint64_t> device = read_id(os, bus, "device");
    if (!vendor || !device || *vendor > 0xFFFF || *device > 0xFFFF) continue;
    const known_gpu* gpu = find_known_gpu(std::uint16_t(*vendor), std::uint16_t(*device));
    if (!gpu) continue;
    const std::optional<std::string> driver = os.bound_driver(bus);
    found.push_back({transport_kind::pci, pci_device_name(bus), std::uint16_t(*vendor), std::uint16_t(*device),
                     str(gpu->name, " (", gpu->gfx_target, "), ",
                         driver ? "driver " + *driver + " bound" : std::string("no driver bound"))});
  }
  return found;
}

}  // namespace tg::transport::pci
