// open_transport.hpp: from a device name ("AMD", "AMD:USB:0", "AMD:PCI:0000:03:00.0") to an
// opened transport: lists AMD GPUs on PCI (through a pci_os) and ASM2464 bridges on USB (through a
// usb_backend), picks one (device_spec.hpp: PCI first, then USB) and opens it.
//
// The OS layers are parameters so that the emulator (a fake sysfs and a fake libusb, drivers/emu)
// stands in for Linux and libusb; system_buses() gives the real ones.
//
//   tg::transport::system_buses buses = tg::transport::real_buses();
//   std::unique_ptr<tg::transport::device_transport> t = tg::transport::open_transport("AMD", buses);
//
// Errors: usage_error for a malformed name; device_error when nothing matches (saying what was
// found) or when opening fails (the transport's own message). Not thread-safe.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/transport/device_spec.hpp"
#include "runtime/transport/pci/pci_os.hpp"
#include "runtime/transport/pci/pci_transport.hpp"
#include "runtime/transport/transport.hpp"
#include "runtime/transport/usb/usb_backend.hpp"
#include "runtime/transport/usb/usb_transport.hpp"

namespace tg::transport {

// Where to look. Either may be null: that bus is not searched.
struct system_buses {
  std::shared_ptr<pci::pci_os> pci;
  std::shared_ptr<usb::usb_backend> usb;
  pci::pci_open_options pci_options{};
  usb::usb_transport_options usb_options{};
  std::string usb_unavailable;  // why `usb` is null (libusb missing or failed to start); empty if not
};

// Linux sysfs and libusb. A machine without libusb (or where libusb_init fails) searches PCI only.
system_buses real_buses();

// Every GPU found, PCI first (device_entry::kind says which); a bus that cannot be listed is
// skipped, with its error in `problems` when given.
std::vector<device_entry> list_devices(system_buses& buses, std::vector<std::string>* problems = nullptr);

std::unique_ptr<device_transport> open_transport(std::string_view device_name, system_buses& buses);

}  // namespace tg::transport
