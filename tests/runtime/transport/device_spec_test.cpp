// device_spec_test.cpp: device names ("AMD", "AMD:USB:0", "AMD:PCI:0000:03:00.0") and the choice
// among discovered devices, including the messages when nothing matches.
#include <doctest/doctest.h>

#include "runtime/transport/device_spec.hpp"
#include <tg/core/error.hpp>

using namespace tg::transport;

namespace {
device_entry pci_entry(const char* bus) { return {transport_kind::pci, std::string("pci:") + bus, 0x1002, 0x744C, ""}; }
device_entry usb_entry(const char* name) { return {transport_kind::usb, std::string("usb:") + name, 0, 0, ""}; }
}  // namespace

TEST_CASE("device names parse into kind, index and name") {
  device_spec any = parse_device_spec("AMD");
  CHECK(!any.kind);
  CHECK(any.index == 0);
  CHECK(any.name.empty());
  CHECK(parse_device_spec("AMD:2").index == 2);
  CHECK(!parse_device_spec("AMD:2").kind);
  CHECK(*parse_device_spec("AMD:PCI").kind == transport_kind::pci);
  CHECK(*parse_device_spec("amd:usb:1").kind == transport_kind::usb);
  CHECK(parse_device_spec("AMD:usb:1").index == 1);
  device_spec bus = parse_device_spec("AMD:PCI:0000:03:00.0");
  CHECK(*bus.kind == transport_kind::pci);
  CHECK(bus.name == "0000:03:00.0");
  CHECK(parse_device_spec("USB:3-2").name == "3-2");  // what the backend registry passes after "AMD:"
  CHECK(parse_device_spec("").index == 0);
}

TEST_CASE("bad device names are usage errors that list the accepted forms") {
  CHECK_THROWS_WITH_AS(parse_device_spec("AMDX"), doctest::Contains("is not an AMD device name"), tg::usage_error);
  CHECK_THROWS_WITH_AS(parse_device_spec("AMD:foo"), doctest::Contains("accepted: AMD, AMD:<n>"), tg::usage_error);
  CHECK_THROWS_WITH_AS(parse_device_spec("AMD:12345678"), doctest::Contains("out of range"), tg::usage_error);
}

TEST_CASE("selection lists PCI devices before USB ones") {
  std::vector<device_entry> pci{pci_entry("0000:03:00.0"), pci_entry("0000:07:00.0")};
  std::vector<device_entry> usb{usb_entry("3-2")};
  CHECK(select_device(parse_device_spec("AMD"), pci, usb).name == "pci:0000:03:00.0");
  CHECK(select_device(parse_device_spec("AMD:2"), pci, usb).name == "usb:3-2");
  CHECK(select_device(parse_device_spec("AMD:USB:0"), pci, usb).name == "usb:3-2");
  CHECK(select_device(parse_device_spec("AMD:PCI:1"), pci, usb).name == "pci:0000:07:00.0");
  CHECK(select_device(parse_device_spec("AMD:PCI:0000:07:00.0"), pci, usb).name == "pci:0000:07:00.0");
  CHECK(select_device(parse_device_spec("AMD:USB:usb:3-2"), pci, usb).name == "usb:3-2");
  CHECK(select_device(parse_device_spec("AMD"), {}, usb).name == "usb:3-2");
}

TEST_CASE("selection errors say what was found") {
  std::vector<device_entry> pci{pci_entry("0000:03:00.0")};
  CHECK_THROWS_WITH_AS(select_device(parse_device_spec("AMD"), {}, {}),
                       doctest::Contains("no AMD GPU found on PCI or USB"), tg::device_error);
  CHECK_THROWS_WITH_AS(select_device(parse_device_spec("AMD:USB"), pci, {}), doctest::Contains("no AMD GPU found on USB"),
                       tg::device_error);
  CHECK_THROWS_WITH_AS(select_device(parse_device_spec("AMD:3"), pci, {}),
                       doctest::Contains("index 3 on PCI or USB does not exist: found 1 (pci:0000:03:00.0)"),
                       tg::device_error);
  CHECK_THROWS_WITH_AS(select_device(parse_device_spec("AMD:PCI:0000:99:00.0"), pci, {}),
                       doctest::Contains("no AMD GPU named '0000:99:00.0' on PCI; found: pci:0000:03:00.0"),
                       tg::device_error);
}
