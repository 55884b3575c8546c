// pci_config_space_test.cpp: the emulated GPU function's config space sizes, assigns and decodes
// BARs and resizes BAR0 the way the PCI and PCIe specs describe (expected values written out by
// hand from those rules, as tinygrad's System.pci_setup_usb_bars applies them).
#include <doctest/doctest.h>

#include <bit>

#include "drivers/emu/pci/pci_config_space.hpp"
#include <tg/core/error.hpp>

using namespace tg::emu;

namespace {

// Sizes a BAR as enumeration software does: all-ones, read back, restore.
std::uint32_t probe(pci_config_space& cs, std::uint32_t offset) {
  const std::uint32_t saved = cs.read(offset, 4);
  cs.write(offset, 0xFFFF'FFFF, 4);
  const std::uint32_t sized = cs.read(offset, 4);
  cs.write(offset, saved, 4);
  return sized;
}

// Walks the extended capability list from 0x100 for `id`; 0 when absent.
std::uint32_t find_ext_cap(const pci_config_space& cs, std::uint32_t id) {
  for (std::uint32_t at = 0x100; at != 0;) {
    const std::uint32_t header = cs.read(at, 4);
    if ((header & 0xFFFF) == id) return at;
    at = header >> 20;
  }
  return 0;
}

}  // namespace

TEST_CASE("the header identifies an AMD VGA function") {
  pci_config_space cs({.device_id = 0x7590});
  CHECK(cs.read(0x00, 2) == 0x1002);
  CHECK(cs.read(0x02, 2) == 0x7590);
  CHECK(cs.read(0x00, 4) == 0x7590'1002u);
  CHECK(cs.read(0x0B, 1) == 0x03);  // base class: display
  CHECK(cs.read(0x0A, 1) == 0x00);  // subclass: VGA
  CHECK(cs.read(0x0E, 1) == 0x00);  // header type 0
  cs.write(0x00, 0x1234, 2);
  CHECK(cs.read(0x00, 2) == 0x1002);  // read-only
}

TEST_CASE("sizing a 64-bit BAR0 reports ~(size - 1) and its type in both dwords") {
  SUBCASE("256 MiB") {
    pci_config_space cs({.vram_bytes = 512ull << 20, .bar0_initial_bytes = 256ull << 20});
    CHECK(probe(cs, 0x10) == 0xF000'000Cu);  // 64-bit (bits 2:1 = 2) | prefetchable (bit 3)
    CHECK(probe(cs, 0x14) == 0xFFFF'FFFFu);
  }
  SUBCASE("16 GiB, above 4 GiB: the low dword holds only the type") {
    pci_config_space cs({.vram_bytes = 16ull << 30, .bar0_initial_bytes = 16ull << 30});
    CHECK(probe(cs, 0x10) == 0x0000'000Cu);
    CHECK(probe(cs, 0x14) == 0xFFFF'FFFCu);
    CHECK(cs.bar_size(0) == 16ull << 30);
  }
}

TEST_CASE("sizing the 32-bit BARs, and the unimplemented ones read 0") {
  pci_config_space cs({.doorbell_bytes = 0x2000, .mmio_bytes = 2ull << 20});
  CHECK(probe(cs, 0x18) == 0xFFFF'E000u);  // BAR2: 8 KiB doorbells
  CHECK(probe(cs, 0x24) == 0xFFE0'0000u);  // BAR5: 2 MiB MMIO
  CHECK(probe(cs, 0x1C) == 0);             // BAR3
  CHECK(probe(cs, 0x20) == 0);             // BAR4
}

TEST_CASE("assigned BAR addresses are kept with the bits below the size cleared") {
  pci_config_space cs({});
  cs.write(0x10, 0x0000'0000, 4);
  cs.write(0x14, 0x0000'0008, 4);
  cs.write(0x18, 0x1000'0000, 4);
  cs.write(0x24, 0x1020'0ABC, 4);  // low bits inside the 2 MiB BAR are dropped
  CHECK(cs.bar_address(0) == 0x8'0000'0000ull);
  CHECK(cs.bar_address(2) == 0x1000'0000ull);
  CHECK(cs.bar_address(5) == 0x1020'0000ull);
  CHECK(cs.read(0x10, 4) == 0x0000'000Cu);
  CHECK(cs.read(0x24, 4) == 0x1020'0000u);
}

TEST_CASE("the Resizable BAR capability is found from 0x100 and its control resizes BAR0") {
  pci_config_space cs({.vram_bytes = 512ull << 20, .bar0_initial_bytes = 256ull << 20});
  const std::uint32_t rebar = find_ext_cap(cs, 0x15);
  REQUIRE(rebar == 0x100);
  CHECK((cs.read(rebar, 4) >> 16 & 0xF) == 1);   // version 1
  const std::uint32_t cap = cs.read(rebar + 4, 4);
  CHECK(cap == ((1u << (8 + 4)) | (1u << (9 + 4))));  // 256 MiB (2^8 MiB) and 512 MiB (2^9 MiB)
  const std::uint32_t ctrl = cs.read(rebar + 8, 4);
  CHECK((ctrl >> 8 & 0x1F) == 8);  // 256 MiB now
  CHECK((ctrl & 0x7) == 0);        // for BAR 0

  // ReBAR as pci_setup_usb_bars sets it: bits 12:8 = bit_length(cap >> 4) - 1, other bits preserved.
  const std::uint32_t largest = std::uint32_t(std::bit_width(cap >> 4)) - 1;
  cs.write(rebar + 8, (ctrl & ~0x1F00u) | largest << 8, 4);
  CHECK(cs.bar_size(0) == 512ull << 20);
  CHECK(probe(cs, 0x10) == 0xE000'000Cu);
  CHECK(probe(cs, 0x14) == 0xFFFF'FFFFu);

  SUBCASE("an unsupported size is ignored") {
    cs.write(rebar + 8, (ctrl & ~0x1F00u) | 12u << 8, 4);  // 4 GiB: not in the capability
    CHECK(cs.bar_size(0) == 512ull << 20);
  }
  SUBCASE("the capability dword is read-only") {
    cs.write(rebar + 4, 0, 4);
    CHECK(cs.read(rebar + 4, 4) == cap);
  }
}

TEST_CASE("COMMAND's MEMORY and MASTER bits are writable and decode needs MEMORY") {
  pci_config_space cs({});
  cs.write(0x10, 0, 4);
  cs.write(0x14, 0x8, 4);
  cs.write(0x18, 0x1000'0000, 4);
  cs.write(0x24, 0x1020'0000, 4);
  CHECK_FALSE(cs.memory_enabled());
  CHECK_FALSE(cs.decode(0x8'0000'1000ull).has_value());

  cs.write(0x04, 0x7, 1);  // IO | MEMORY | MASTER
  CHECK(cs.memory_enabled());
  CHECK(cs.bus_master());
  CHECK(cs.read(0x04, 2) == 0x7);

  auto hit = cs.decode(0x8'0000'1000ull);
  REQUIRE(hit.has_value());
  CHECK(hit->index == 0);
  CHECK(hit->offset == 0x1000);
  hit = cs.decode(0x1000'0018ull);
  REQUIRE(hit.has_value());
  CHECK(hit->index == 2);
  CHECK(hit->offset == 0x18);
  hit = cs.decode(0x1020'0000ull + 0xDE3 * 4);
  REQUIRE(hit.has_value());
  CHECK(hit->index == 5);
  CHECK(hit->offset == 0xDE3 * 4);
  CHECK_FALSE(cs.decode(0x8'1000'0000ull).has_value());  // just past the 256 MiB BAR0
  CHECK_FALSE(cs.decode(0x1000'2000ull).has_value());    // just past the doorbells

  cs.write(0x04, 0x4, 2);  // MASTER only
  CHECK_FALSE(cs.memory_enabled());
  CHECK(cs.bus_master());
}

TEST_CASE("sub-dword writes merge, other registers read back what was written") {
  pci_config_space cs({});
  cs.write(0x40, 0xAABB'CCDD, 4);
  cs.write(0x41, 0x11, 1);
  CHECK(cs.read(0x40, 4) == 0xAABB'11DDu);
  cs.write(0x16, 0x0009, 2);  // BAR0's upper half, upper 16 bits
  CHECK(cs.read(0x14, 4) == 0x0009'0000u);
}

TEST_CASE("misaligned or oversized config accesses are usage errors") {
  pci_config_space cs({});
  CHECK_THROWS_WITH_AS(cs.read(0x02, 4),
                       "emu pci: config access of 4 bytes at 0x2 is not a naturally aligned 1, 2 or 4-byte access "
                       "inside the 4 KiB config space",
                       tg::usage_error);
  CHECK_THROWS_AS(cs.write(0x1000, 0, 1), tg::usage_error);
  CHECK_THROWS_AS(cs.read(0x00, 3), tg::usage_error);
  CHECK_THROWS_AS(pci_config_space({.doorbell_bytes = 0x3000}), tg::usage_error);
}
