// processors_test.cpp: the emulated cards chosen by processor: gfx1100 (RX 7900 XTX), gfx1101 (RX
// 7800 XT), gfx1200 (RX 9060) and gfx1201 (RX 9070 XT); their versions, PCI ids, register tables
// and firmware sets, and the device names that select them (AMD:EMU:gfx1101:usb, ...).
#include <doctest/doctest.h>

#include <string>

#include <tg/core/error.hpp>

#include "drivers/amd/regs/gc_11_0_0.hpp"
#include "drivers/amd/regs/gc_11_0_3.hpp"
#include "drivers/emu/emu_device.hpp"
#include "drivers/emu/firmware/emu_firmware.hpp"
#include "drivers/emu/personality.hpp"

using namespace tg::emu;

namespace {

std::string tag(ip_version v) { return std::to_string(v.major) + "_" + std::to_string(v.minor) + "_" + std::to_string(v.revision); }

bool same(ip_version a, ip_version b) { return a.major == b.major && a.minor == b.minor && a.revision == b.revision; }

}  // namespace

TEST_CASE("each processor is its own card, and an empty processor is the generation's first") {
  CHECK(personality_of(gfx_gen::gfx11).target == "gfx1100");
  CHECK(personality_of(gfx_gen::gfx12).target == "gfx1200");
  CHECK(&personality_of(gfx_gen::gfx11, "gfx1100") == &personality_of(gfx_gen::gfx11));
  const personality& n32 = personality_of(gfx_gen::gfx11, "gfx1101");
  CHECK(n32.card == "RX 7800 XT");
  CHECK(n32.pci_device_id == 0x747E);
  CHECK(same(n32.gc, {11, 0, 3}));
  CHECK(same(n32.sdma, {6, 0, 3}));
  CHECK(same(n32.mp0, {13, 0, 10}));
  CHECK(same(n32.mp1, {13, 0, 10}));
  const personality& n48 = personality_of(gfx_gen::gfx12, "gfx1201");
  CHECK(n48.card == "RX 9070 XT");
  CHECK(n48.pci_device_id == 0x7550);
  CHECK(same(n48.gc, {12, 0, 1}));
  CHECK(same(n48.sdma, {7, 0, 1}));
  CHECK(same(n48.mp0, {14, 0, 3}));
  // GC 11.0.3's GC hub sits elsewhere (gc_11_0_3_offset.h); its CP registers are 11.0.0's.
  CHECK(n32.gc_table == &tg::amd::regs::gc_11_0_3::table);
  CHECK(n32.gc_reg.vm_pt_base_lo == personality_of(gfx_gen::gfx11).gc_reg.vm_pt_base_lo + 0x10);
  CHECK(n32.gc_reg.hqd_active == personality_of(gfx_gen::gfx11).gc_reg.hqd_active);
  CHECK(n48.gc_reg.vm_pt_base_lo == personality_of(gfx_gen::gfx12).gc_reg.vm_pt_base_lo);
  CHECK(emulated_processor_gen("gfx1101") == gfx_gen::gfx11);
  CHECK(emulated_processor_gen("gfx1201") == gfx_gen::gfx12);
  CHECK_FALSE(emulated_processor_gen("gfx1102").has_value());
  CHECK_THROWS_AS(personality_of(gfx_gen::gfx12, "gfx1101"), tg::usage_error);
  CHECK_THROWS_WITH_AS(personality_of(gfx_gen::gfx11, "gfx1102"), doctest::Contains("gfx1101 (RX 7800 XT)"),
                       tg::usage_error);
}

TEST_CASE("the emulator's firmware set of each processor has its IP versions in the file names") {
  for (const char* processor : {"gfx1100", "gfx1101", "gfx1200", "gfx1201"}) {
    CAPTURE(std::string(processor));
    const personality& p = personality_of(*emulated_processor_gen(processor), processor);
    const firmware_ip_versions v = firmware_versions_for(processor);
    CHECK(v.gc == tag(p.gc));
    CHECK(v.sdma0 == tag(p.sdma));
    CHECK(v.mp0 == tag(p.mp0));
    CHECK(v.mp1 == tag(p.mp1));
  }
  CHECK(firmware_versions_for("gfx1101").mp0 == "13_0_10");
  CHECK(firmware_versions_for("gfx1201").sdma0 == "7_0_1");
  CHECK_THROWS_AS(firmware_versions_for("gfx1030"), tg::usage_error);
}

TEST_CASE("AMD:EMU takes a generation or processor, a bus and a VRAM size, each at most once") {
  emu_device_config c = parse_emu_device_args("gfx1101:usb");
  CHECK(c.gen == gfx_gen::gfx11);
  CHECK(c.processor == "gfx1101");
  CHECK(c.bus == emulated_bus::usb);
  c = parse_emu_device_args("pci:gfx1201");
  CHECK(c.gen == gfx_gen::gfx12);
  CHECK(c.processor == "gfx1201");
  CHECK(c.bus == emulated_bus::pci);
  c = parse_emu_device_args("gfx12");
  CHECK(c.gen == gfx_gen::gfx12);
  CHECK(c.processor.empty());
  c = parse_emu_device_args("gfx1100");
  CHECK(c.processor == "gfx1100");
  CHECK(c.vram_bytes == 512ull << 20);
  c = parse_emu_device_args("gfx12:usb:vram=256M");  // a small card (issues 14 and 15: VRAM nearly full)
  CHECK(c.bus == emulated_bus::usb);
  CHECK(c.vram_bytes == 256ull << 20);
  CHECK(parse_emu_device_args("vram=2G").vram_bytes == 2ull << 30);
  for (const char* bad : {"gfx1101:gfx11", "gfx1201:gfx1201", "usb:gfx1101:pci", "gfx1102", "gfx1101:sata", "vram=64M",
                          "vram=256", "vram=xM", "vram=256M:vram=512M"}) {
    CAPTURE(std::string(bad));
    CHECK_THROWS_WITH_AS(parse_emu_device_args(bad), doctest::Contains("AMD:EMU:gfx1101 (RX 7800 XT)"), tg::usage_error);
  }
}
