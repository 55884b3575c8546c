// usb_open_test.cpp: discovery and the open sequence (tinygrad's USB3.list_devices, __init__), its recovery from a
// bridge a crashed process left wedged (ours; the reference has none), and the per-device process lock.
#include <doctest/doctest.h>

#include <unistd.h>

#include "tests/runtime/transport/usb/fake_bridge.hpp"
#include "runtime/transport/usb/process_lock.hpp"
#include "runtime/transport/usb/usb_device.hpp"
#include <tg/core/error.hpp>

using namespace tg::transport::usb;
using tg::transport::usb::testing::fake_backend;
using tg::transport::usb::testing::fake_bridge;

TEST_CASE("discovery lists only the custom-firmware ids, named usb:<bus>-<address>") {
  fake_bridge bridge;
  fake_backend backend(bridge);
  backend.devices = {{1, 5, 0x174C, 0x2464, 1}, {3, 2, 0xADD1, 0x0001, 2}, {2, 9, 0x3801, 0x0001, 2},
                     {2, 10, 0x3801, 0x0002, 2}};
  auto found = list_usb_bridges(backend);
  REQUIRE(found.size() == 2);
  CHECK(found[0].name == "usb:3-2");
  CHECK(found[0].kind == tg::transport::transport_kind::usb);
  CHECK(found[1].name == "usb:2-9");
  CHECK(find_usb_bridge(backend, "usb:2-9").address == 9);
  CHECK(find_usb_bridge(backend, "").address == 2);
  CHECK_THROWS_WITH_AS(find_usb_bridge(backend, "usb:9-9"), "usb: no bridge called usb:9-9 (found: usb:3-2, usb:2-9)",
                       tg::device_error);
}

TEST_CASE("open reads the product string, then configuration 1, interface 0, alternate setting 0") {
  fake_bridge bridge;
  fake_backend backend(bridge);
  usb_device dev = open_usb_device(backend, backend.list().front(), nullptr);
  CHECK(dev.product() == "custom-v2");
  CHECK(dev.name() == "usb:3-2");
  REQUIRE(bridge.log.size() == 1);
  CHECK(bridge.log[0].request_type == 0x80);
  CHECK(bridge.log[0].request == 6);
  CHECK(bridge.log[0].value == 0x0302);
  CHECK(bridge.log[0].index == 0x0409);
  CHECK(bridge.setup ==
        std::vector<std::string>{"set_configuration 1", "claim_interface 0", "set_interface_alt_setting 0 0"});
}

TEST_CASE("an attached kernel driver is detached and the device reset before configuring") {
  fake_bridge bridge;
  bridge.kernel_driver = true;
  fake_backend backend(bridge);
  open_usb_device(backend, backend.list().front(), nullptr);
  CHECK(bridge.setup == std::vector<std::string>{"detach_kernel_driver 0", "reset", "set_configuration 1",
                                                 "claim_interface 0", "set_interface_alt_setting 0 0"});
}

TEST_CASE("the AS2462 product prefix is accepted too") {
  fake_bridge bridge;
  bridge.product = "AS2462 tinygrad";
  fake_backend backend(bridge);
  CHECK(open_usb_device(backend, backend.list().front(), nullptr).product() == "AS2462 tinygrad");
}

TEST_CASE("a wrong product string is an error quoting what was read") {
  fake_bridge bridge;
  bridge.product = "ASM2464PD";
  fake_backend backend(bridge);
  CHECK_THROWS_WITH_AS(open_usb_device(backend, backend.list().front(), nullptr),
                       "usb:3-2: product string is \"ASM2464PD\"; expected one starting with \"custom\" or "
                       "\"AS2462\" (flash the custom ASM2464 firmware)",
                       tg::device_error);
}

TEST_CASE("a bridge that does not answer once is reset, says so, and opens") {
  fake_bridge bridge;
  bridge.descriptor_timeouts = 1;
  fake_backend backend(bridge);
  std::vector<std::string> said;
  usb_device dev = open_usb_device(backend, backend.list().front(), [&](const std::string& s) { said.push_back(s); });
  CHECK(dev.product() == "custom-v2");
  CHECK(bridge.resets == 1);
  REQUIRE(said.size() == 1);
  CHECK(said[0] ==
        "bridge usb:3-2 did not answer (probably left mid-transfer by a process that crashed); resetting the USB "
        "device");
}

TEST_CASE("a bridge that never answers asks for a replug after one reset") {
  fake_bridge bridge;
  bridge.descriptor_timeouts = -1;
  fake_backend backend(bridge);
  CHECK_THROWS_WITH_AS(open_usb_device(backend, backend.list().front(), nullptr),
                       "usb:3-2: reading the product string (GET_DESCRIPTOR wValue=0x0302 wIndex=0x0409) failed "
                       "even after a USB reset: timeout; the bridge is wedged: unplug and replug the dock, or "
                       "power-cycle it",
                       tg::device_error);
  CHECK(bridge.resets == 1);
  CHECK(bridge.setup == std::vector<std::string>{"reset"});  // nothing configured on a wedged bridge
}

TEST_CASE("a second lock on the same device fails with a clear error; the first one's release frees it") {
  std::string dir = "/tmp";
  std::string file = "am_usb_test_" + std::to_string(::getpid()) + ".lock";
  {
    process_lock first("usb:3-2", file, dir);
    CHECK(first.path() == dir + "/" + file);
    CHECK_THROWS_WITH_AS(process_lock("usb:3-2", file, dir),
                         ("usb:3-2 is in use by another process (it holds " + dir + "/" + file +
                          "); stop that process or pick another device")
                             .c_str(),
                         tg::device_error);
  }
  CHECK_NOTHROW(process_lock("usb:3-2", file, dir));
  ::unlink((dir + "/" + file).c_str());
}

TEST_CASE("the libusb backend starts without hardware and names any bridge it finds usb:<bus>-<address>") {
  std::unique_ptr<usb_backend> usb;
  try {
    usb = make_libusb_backend();
  } catch (const tg::device_error& e) {
    // Built without libusb, or no usable USB stack: the message says which.
    CHECK(std::string(e.what()).rfind("usb: ", 0) == 0);
    return;
  }
  for (const auto& entry : list_usb_bridges(*usb)) {
    CHECK(entry.name.rfind("usb:", 0) == 0);
    CHECK(entry.name.find('-') != std::string::npos);
  }
}
