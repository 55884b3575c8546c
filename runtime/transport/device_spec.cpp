// device_spec.cpp: parsing "AMD[:PCI|:USB][:index|:name]" and choosing among discovered devices.
#include "runtime/transport/device_spec.hpp"

#include <cctype>

#include <tg/core/error.hpp>

namespace tg::transport {
namespace {

constexpr const char* accepted =
    "accepted: AMD, AMD:<n>, AMD:PCI, AMD:PCI:<n>, AMD:PCI:<bus id like 0000:03:00.0>, AMD:USB, AMD:USB:<n>, "
    "AMD:USB:<bus-address like 3-2>";

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// "PCI" or "USB" at the start of `rest`, followed by nothing or ':'.
std::optional<transport_kind> take_kind(std::string_view& rest) {
  for (auto [word, kind] : {std::pair{"PCI", transport_kind::pci}, std::pair{"USB", transport_kind::usb}}) {
    std::string_view w(word);
    if (rest.size() >= 3 && equals_ignoring_case(rest.substr(0, 3), w) && (rest.size() == 3 || rest[3] == ':')) {
      rest.remove_prefix(rest.size() == 3 ? 3 : 4);
      return kind;
    }
  }
  return std::nullopt;
}

std::string kind_name(std::optional<transport_kind> k) {
  if (!k) return "PCI or USB";
  return *k == transport_kind::pci ? "PCI" : "USB";
}

}  // namespace

device_spec parse_device_spec(std::string_view text) {
  std::string_view rest = text;
  if (rest.size() >= 3 && equals_ignoring_case(rest.substr(0, 3), "AMD")) {
    if (rest.size() == 3) return {};
    if (rest[3] != ':') throw usage_error(str("device '", text, "' is not an AMD device name; ", accepted));
    rest.remove_prefix(4);
  }
  device_spec spec;
  spec.kind = take_kind(rest);
  if (rest.empty()) return spec;
  if (all_digits(rest)) {
    if (rest.size() > 6) throw usage_error(str("device '", text, "': index ", rest, " is out of range"));
    spec.index = std::stoul(std::string(rest));
    return spec;
  }
  if (!spec.kind) throw usage_error(str("device '", text, "': '", rest, "' is neither an index nor PCI/USB; ", accepted));
  spec.name = std::string(rest);
  return spec;
}

device_entry select_device(const device_spec& spec, const std::vector<device_entry>& pci,
                           const std::vector<device_entry>& usb) {
  std::vector<device_entry> candidates;
  if (!spec.kind || *spec.kind == transport_kind::pci) candidates.insert(candidates.end(), pci.begin(), pci.end());
  if (!spec.kind || *spec.kind == transport_kind::usb) candidates.insert(candidates.end(), usb.begin(), usb.end());
  if (candidates.empty())
    throw device_error(str("no AMD GPU found on ", kind_name(spec.kind),
                           ". PCI: a gfx11/gfx12 card (vendor 0x1002) under /sys/bus/pci/devices; USB: an ASM2464 dock "
                           "with the custom firmware (USB id add1:0001 or 3801:0001). `tg-amd list` shows what is seen."));
  if (!spec.name.empty()) {
    for (const device_entry& e : candidates) {
      std::string_view n = e.name;
      if (auto colon = n.find(':'); colon != std::string_view::npos) n.remove_prefix(colon + 1);  // "pci:" / "usb:"
      if (n == spec.name || e.name == spec.name) return e;
    }
    std::string seen;
    for (const device_entry& e : candidates) seen += (seen.empty() ? "" : ", ") + e.name;
    throw device_error(str("no AMD GPU named '", spec.name, "' on ", kind_name(spec.kind), "; found: ", seen));
  }
  if (spec.index >= candidates.size())
    throw device_error(str("AMD GPU index ", spec.index, " on ", kind_name(spec.kind), " does not exist: found ",
                           candidates.size(), " (", candidates.front().name,
                           candidates.size() > 1 ? ", ..." : "", ")"));
  return candidates[spec.index];
}

}  // namespace tg::transport
