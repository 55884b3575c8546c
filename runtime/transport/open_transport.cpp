// open_transport.cpp: listing both buses and opening the chosen GPU.
#include "runtime/transport/open_transport.hpp"

#include "runtime/transport/pci/pci_devices.hpp"
#include "runtime/transport/pci/posix_pci_os.hpp"
#include "runtime/transport/usb/usb_device.hpp"
#include <tg/core/error.hpp>

namespace tg::transport {
namespace {

std::vector<device_entry> list_kind(system_buses& buses, transport_kind kind, std::vector<std::string>* problems) {
  try {
    if (kind == transport_kind::pci) return buses.pci ? pci::list_pci_devices(*buses.pci) : std::vector<device_entry>{};
    if (!buses.usb && !buses.usb_unavailable.empty() && problems)
      problems->push_back(str("USB: not searched: ", buses.usb_unavailable));
    return buses.usb ? usb::list_usb_bridges(*buses.usb) : std::vector<device_entry>{};
  } catch (const std::exception& e) {
    if (problems) problems->push_back(str(kind == transport_kind::pci ? "PCI" : "USB", ": ", e.what()));
    return {};
  }
}

}  // namespace

system_buses real_buses() {
  system_buses buses;
  buses.pci = std::make_shared<pci::posix_pci_os>();
  try {
    buses.usb = usb::make_libusb_backend();
  } catch (const device_error& e) {
    buses.usb = nullptr;  // no libusb here: PCI only, and listings say why USB was not searched
    buses.usb_unavailable = e.what();
  }
  return buses;
}

std::vector<device_entry> list_devices(system_buses& buses, std::vector<std::string>* problems) {
  std::vector<device_entry> all = list_kind(buses, transport_kind::pci, problems);
  std::vector<device_entry> usb = list_kind(buses, transport_kind::usb, problems);
  all.insert(all.end(), usb.begin(), usb.end());
  return all;
}

std::unique_ptr<device_transport> open_transport(std::string_view device_name, system_buses& buses) {
  device_spec spec = parse_device_spec(device_name);
  std::vector<std::string> problems;
  std::vector<device_entry> pci_found, usb_found;
  if (!spec.kind || *spec.kind == transport_kind::pci) pci_found = list_kind(buses, transport_kind::pci, &problems);
  if (!spec.kind || *spec.kind == transport_kind::usb) usb_found = list_kind(buses, transport_kind::usb, &problems);
  device_entry chosen;
  try {
    chosen = select_device(spec, pci_found, usb_found);
  } catch (const device_error& e) {
    std::string why;
    for (const std::string& p : problems) why += "\n  " + p;
    throw device_error(str(e.what(), why));
  }
  if (chosen.kind == transport_kind::pci) {
    std::string bus = chosen.name.substr(chosen.name.find(':') + 1);  // "pci:0000:03:00.0"
    return std::make_unique<pci::pci_transport>(buses.pci, bus, buses.pci_options);
  }
  return usb::open_usb_transport(*buses.usb, chosen.name, buses.usb_options);
}

}  // namespace tg::transport
