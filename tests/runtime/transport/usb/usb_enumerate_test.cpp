// usb_enumerate_test.cpp: PCIe link bring-up (tinygrad's CustomASM24Controller.__init__), bus numbering and BAR
// assignment behind the bridge (System.pci_setup_usb_bars), checked write by write against the reference's values.
#include <doctest/doctest.h>

#include "tests/runtime/transport/usb/fake_bridge.hpp"
#include "runtime/transport/usb/link.hpp"
#include "runtime/transport/usb/pcie_enumerate.hpp"
#include "runtime/transport/usb/usb_device.hpp"
#include <tg/core/error.hpp>

using namespace tg::transport::usb;
using tg::transport::usb::testing::fake_backend;
using tg::transport::usb::testing::fake_bridge;
using cfg_write = fake_bridge::config_write_record;

namespace {

using rig = tg::transport::usb::testing::opened_bridge;

// pci_setup_usb_bars' first step, for bridge bus b: windows 0x1000_0000 (non-prefetchable) and 0x8_0000_0000.
std::vector<cfg_write> bridge_writes(unsigned b) {
  return {{b, 0x18, 4, (b + 1) << 8 | 4u << 16},  // primary 0, secondary b+1, subordinate 4
          {b, 0x20, 2, 0x1000},       {b, 0x22, 2, 0xFFFF},
          {b, 0x24, 2, 0x0000},       // 0x8_0000_0000 >> 16 keeps no bits in the 16-bit register
          {b, 0x26, 2, 0xFFFF},       {b, 0x28, 4, 0x8},
          {b, 0x2C, 4, 0xFFFFFFFF},   {b, 0x04, 1, 0x07}};
}

}  // namespace

TEST_CASE("enumeration writes bridges, ReBAR, BARs and COMMAND in the reference's order with its values") {
  rig r;
  auto bars = enumerate_pcie(r.dev);
  std::vector<cfg_write> expect;
  for (unsigned b = 0; b < 4; ++b) {
    auto w = bridge_writes(b);
    expect.insert(expect.end(), w.begin(), w.end());
  }
  // ReBAR control (cap at 0x150, control at +8): sizes 1 MiB..16 GiB -> field 14, other bits kept.
  expect.push_back({4, 0x158, 4, 0x0E20});
  // BAR0, 64-bit prefetchable, 16 GiB after ReBAR: probe both dwords, then 0x8_0000_0000.
  expect.insert(expect.end(), {{4, 0x10, 4, 0xFFFFFFFF}, {4, 0x14, 4, 0xFFFFFFFF}, {4, 0x10, 4, 0}, {4, 0x14, 4, 0x8}});
  // BAR2, 64-bit prefetchable 2 MiB: next in the prefetchable window, 0x8_0000_0000 + 16 GiB.
  expect.insert(expect.end(), {{4, 0x18, 4, 0xFFFFFFFF}, {4, 0x1C, 4, 0xFFFFFFFF}, {4, 0x18, 4, 0}, {4, 0x1C, 4, 0xC}});
  // BAR4 is I/O: untouched. BAR5, 32-bit 1 MiB: the non-prefetchable window's start.
  expect.insert(expect.end(), {{4, 0x24, 4, 0xFFFFFFFF}, {4, 0x24, 4, 0x1000'0000}});
  expect.push_back({4, 0x04, 1, 0x07});  // GPU COMMAND = IO | MEMORY | MASTER
  CHECK(r.bridge.config_writes == expect);

  CHECK(bars[0].bus_address == 0x8'0000'0000);
  CHECK(bars[0].size == 16ull << 30);
  CHECK(bars[0].is_64bit);
  CHECK(bars[0].prefetchable);
  CHECK(bars[2].bus_address == 0xC'0000'0000);
  CHECK(bars[2].size == 2u << 20);
  CHECK(bars[4].size == 0);
  CHECK(bars[5].bus_address == 0x1000'0000);
  CHECK(bars[5].size == 1u << 20);
  CHECK(!bars[5].is_64bit);
  CHECK(r.bridge.bars[0].value == 0x8'0000'0000);  // what the model's BAR registers hold now
  CHECK(r.bridge.bars[5].value == 0x1000'0000);
}

TEST_CASE("a link already up needs one XDATA read and no power request") {
  rig r;
  bring_up_link(r.dev);
  REQUIRE(r.bridge.log.size() == 1);
  CHECK(r.bridge.log[0].request_type == 0xC0);
  CHECK(r.bridge.log[0].request == 0xE4);
  CHECK(r.bridge.log[0].value == 0xB450);
  CHECK(r.bridge.log[0].size == 1);
}

TEST_CASE("a link that is down is powered on with 0xF3(1) and read again") {
  rig r;
  r.bridge.xdata[0xB450] = 0x00;
  bring_up_link(r.dev);
  REQUIRE(r.bridge.log.size() == 3);
  CHECK(r.bridge.log[1].request == 0xF3);
  CHECK(r.bridge.log[1].request_type == 0x40);
  CHECK(r.bridge.log[1].value == 1);
  CHECK(r.bridge.log[1].timeout == std::chrono::milliseconds(10000));
  CHECK(r.bridge.log[2].value == 0xB450);
}

TEST_CASE("a link that stays down is an error naming the LTSSM state") {
  rig r;
  r.bridge.xdata[0xB450] = 0x00;
  r.bridge.ltssm_after_power = 0x11;
  CHECK_THROWS_WITH_AS(bring_up_link(r.dev),
                       "usb:3-2: PCIe link not up (LTSSM=0x11, expected 0x78 after PCIe power-on request 0xF3); "
                       "custom firmware not ready: check the GPU's power cable, then replug the dock",
                       tg::device_error);
}
