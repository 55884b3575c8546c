// device_spec.hpp: which GPU a device name asks for: "AMD" (the first one found: PCI first, then
// USB), "AMD:1" (the second one in that order), "AMD:PCI:0", "AMD:USB:0", or a PCI bus id /
// USB name ("AMD:PCI:0000:03:00.0", "AMD:USB:3-2"). The text after "AMD:" is what the runtime's
// backend registry passes on (backend.hpp), so both forms are accepted here.
//
//   tg::transport::device_spec s = tg::transport::parse_device_spec("AMD:USB:0");
//   // s.kind == transport_kind::usb, s.index == 0
//
// Pure parsing: usage_error quoting the name and listing the accepted forms.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/transport/transport.hpp"

namespace tg::transport {

struct device_spec {
  std::optional<transport_kind> kind;  // nullopt: any transport, PCI devices listed first
  std::size_t index = 0;               // among the devices of that kind (or of all)
  std::string name;                    // a bus id / USB name instead of an index; empty if none
};

device_spec parse_device_spec(std::string_view text);

// The entry `spec` selects from `pci` and `usb` (each in discovery order): device_error saying
// what was found when nothing matches ("no AMD GPU found on PCI or USB" and what to check).
device_entry select_device(const device_spec& spec, const std::vector<device_entry>& pci,
                           const std::vector<device_entry>& usb);

}  // namespace tg::transport
