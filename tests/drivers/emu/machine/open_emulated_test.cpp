// open_emulated_test.cpp: opening the emulated GPU by device name through the same code that opens a
// real card (transport::open_transport), on the emulated PCI host and behind the emulated USB
// bridge, and the errors a user meets: no device, a bridge with the wrong firmware, a PCIe link
// that does not come up, and a bridge left wedged by a crashed process.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "drivers/emu/machine/emulated_machine.hpp"
#include <tg/core/error.hpp>

using namespace tg;
using emu::emulated_bus;
using emu::emulated_machine;
using emu::emulated_machine_config;

namespace {

constexpr std::uint32_t rcc_config_memsize = 0xDE3;  // VRAM in MiB (tinygrad's AMDev._run_discovery)

emulated_machine_config usb_config() {
  emulated_machine_config c{.gen = emu::gfx_gen::gfx12, .vram_bytes = 512ull << 20, .bus = emulated_bus::usb,
                            .write_firmware = false};
  c.bridge.limits.enabled = true;  // virtual time: limits apply, nothing sleeps
  return c;
}

// Keeps the recovery message the USB transport logs instead of printing it.
transport::system_buses quiet(transport::system_buses buses, std::vector<std::string>& log) {
  buses.usb_options.log = [&log](const std::string& line) { log.push_back(line); };
  return buses;
}

}  // namespace

TEST_CASE("the emulated GPU on PCI opens as AMD, AMD:0 and AMD:PCI:0") {
  emulated_machine m({.gen = emu::gfx_gen::gfx11, .vram_bytes = 512ull << 20, .bus = emulated_bus::pci,
                      .write_firmware = false});
  std::vector<transport::device_entry> found = transport::list_devices(m.buses());
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == transport::transport_kind::pci);
  CHECK(found[0].name == "pci:0000:c3:00.0");
  CHECK(found[0].device_id == 0x744C);
  for (const char* name : {"AMD", "AMD:0", "AMD:PCI:0", "AMD:PCI:0000:c3:00.0"}) {
    CAPTURE(name);
    auto t = transport::open_transport(name, m.buses());
    CHECK(t->name() == "pci:0000:c3:00.0");
    CHECK(t->config_read(0x00, 2) == 0x1002);
    CHECK(t->bar(5).read32(rcc_config_memsize * 4) == 512);
  }
  CHECK_THROWS_WITH_AS(transport::open_transport("AMD:USB", m.buses()), doctest::Contains("no AMD GPU found on USB"),
                       device_error);
  CHECK_THROWS_WITH_AS(transport::open_transport("AMD:1", m.buses()),
                       doctest::Contains("index 1 on PCI or USB does not exist: found 1"), device_error);
}

TEST_CASE("the emulated GPU behind the bridge opens as AMD and AMD:USB:0, with BARs assigned behind the bridge") {
  emulated_machine m(usb_config());
  std::vector<std::string> log;
  transport::system_buses buses = quiet(m.buses(), log);
  std::vector<transport::device_entry> found = transport::list_devices(buses);
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == transport::transport_kind::usb);
  CHECK(found[0].name == "usb:1-2");
  auto t = transport::open_transport("AMD:USB:0", buses);
  CHECK(t->name() == "usb:1-2");
  CHECK(t->config_read(0x00, 2) == 0x1002);
  CHECK(t->config_read(0x02, 2) == 0x7590);
  transport::bar_region vram = t->bar_info(0);
  CHECK(vram.bus_address == 0x8'0000'0000ull);  // the prefetchable window tinygrad's USBPCIDevice picks
  CHECK(vram.size == 512ull << 20);              // ReBAR grew it to all of VRAM
  CHECK(t->bar(5).read32(rcc_config_memsize * 4) == 512);
  CHECK(t->bar(0).mapping() == nullptr);  // every access is a message over USB
  CHECK(m.bridge()->stats().largest_stream_write <= t->limits().max_write_chunk);
}

TEST_CASE("no device anywhere says what to look for") {
  emulated_machine m(usb_config());
  transport::system_buses none;  // neither bus searched: what a machine without a GPU sees
  none.pci = std::make_shared<emu::emu_pci_host>();
  CHECK_THROWS_WITH_AS(transport::open_transport("AMD", none), doctest::Contains("no AMD GPU found on PCI or USB"),
                       device_error);
}

TEST_CASE("a bridge whose product string is not the custom firmware's is refused, quoting it") {
  emulated_machine_config c = usb_config();
  c.bridge.product = "ASM2464PD stock firmware";
  emulated_machine m(c);
  std::vector<std::string> log;
  transport::system_buses buses = quiet(m.buses(), log);
  CHECK_THROWS_WITH_AS(transport::open_transport("AMD:USB:0", buses),
                       doctest::Contains("ASM2464PD stock firmware"), device_error);
}

TEST_CASE("a PCIe link that never trains is reported with its LTSSM state") {
  emulated_machine_config c = usb_config();
  c.bridge.link_trains = false;
  emulated_machine m(c);
  std::vector<std::string> log;
  transport::system_buses buses = quiet(m.buses(), log);
  CHECK_THROWS_WITH_AS(transport::open_transport("AMD", buses), doctest::Contains("PCIe link not up"), device_error);
}

TEST_CASE("a bridge left mid-stream by a crashed process is reset and works on the next open") {
  emulated_machine m(usb_config());
  std::vector<std::string> log;
  transport::system_buses buses = quiet(m.buses(), log);
  {
    auto first = transport::open_transport("AMD", buses);
    first->bar(0).write32(0x1000, 0xC0FFEE);
    m.bridge()->abandon_mid_stream();  // the process "dies" here, its stream half sent
  }
  CHECK(m.bridge()->wedged());
  auto second = transport::open_transport("AMD", buses);
  CHECK(!m.bridge()->wedged());
  CHECK(m.bridge()->stats().resets >= 1);
  CHECK(second->bar(0).read32(0x1000) == 0xC0FFEE);  // VRAM survived; the link and BARs work again
  bool told = false;
  for (const std::string& line : log) told = told || line.find("resetting") != std::string::npos;
  CHECK(told);
}

TEST_CASE("when libusb could not start, listings and errors say why USB was not searched") {
  emulated_machine m({.gen = emu::gfx_gen::gfx11, .vram_bytes = 512ull << 20, .bus = emulated_bus::pci,
                      .write_firmware = false});
  transport::system_buses buses = m.buses();
  buses.usb = nullptr;
  buses.usb_unavailable = "libusb_init failed: LIBUSB_ERROR_OTHER";
  std::vector<std::string> problems;
  CHECK(transport::list_devices(buses, &problems).size() == 1);  // the PCI GPU is still found
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "USB: not searched: libusb_init failed: LIBUSB_ERROR_OTHER");
  CHECK_THROWS_WITH_AS(transport::open_transport("AMD:USB", buses),
                       doctest::Contains("USB: not searched: libusb_init failed"), device_error);
}
