// usb_transport_test.cpp: usb_transport as the driver sees it: config space, BARs as streams, the
// SRAM's DMA regions and staging window with their 0xF2 framing (as tinygrad's USBIface uses them), reset and the
// process lock.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "tests/runtime/transport/usb/fake_bridge.hpp"
#include "runtime/transport/usb/usb_transport.hpp"
#include <tg/core/error.hpp>

using namespace tg::transport::usb;
using tg::transport::usb::testing::fake_backend;
using tg::transport::usb::testing::fake_bridge;
using tg::transport::usb::testing::usb_record;

namespace {

std::string temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tg_usb_test_XXXXXX").string();
  char* made = ::mkdtemp(pattern.data());
  REQUIRE(made != nullptr);
  return pattern;
}

struct rig {
  std::string dir = temp_dir();
  fake_bridge bridge;
  fake_backend backend{bridge};
  usb_transport t{backend, backend.list().front(), options()};
  rig() { bridge.log.clear(); }
  ~rig() { std::filesystem::remove_all(dir); }
  usb_transport_options options() {
    usb_transport_options o;
    o.lock_directory = dir;
    o.log = nullptr;
    return o;
  }
};

std::uint32_t le32(const std::vector<std::byte>& p, std::size_t at) {
  return std::uint32_t(p[at]) | std::uint32_t(p[at + 1]) << 8 | std::uint32_t(p[at + 2]) << 16 |
         std::uint32_t(p[at + 3]) << 24;
}

std::vector<std::byte> pattern(std::size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::byte(i * 13 + std::size_t(seed));
  return v;
}

}  // namespace

TEST_CASE("the transport is named after the bridge and reports bounded chunks and no CPU mapping") {
  rig r;
  CHECK(r.t.name() == "usb:3-2");
  CHECK(r.t.kind() == tg::transport::transport_kind::usb);
  auto l = r.t.limits();
  CHECK(l.max_write_chunk == 65536);
  CHECK(l.max_read_chunk == 65536);
  CHECK(!l.cpu_mapped_vram);
  CHECK(std::filesystem::exists(r.dir + "/am_usb_3-2.lock"));
}

TEST_CASE("config space is config TLPs to bus 4 and BARs come from the enumeration") {
  rig r;
  CHECK(r.t.config_read(0x00, 2) == 0x1002);
  CHECK(r.bridge.log[0].value == 0x0305);
  CHECK(r.t.bar_info(0).bus_address == 0x8'0000'0000);
  CHECK(r.t.bar_info(5).bus_address == 0x1000'0000);
  CHECK(r.t.bar(0).size() == 16ull << 30);
  CHECK(r.t.bar(0).mapping() == nullptr);
  CHECK_THROWS_AS(r.t.bar(4), tg::usage_error);   // I/O BAR: not assigned
  CHECK_THROWS_AS(r.t.bar_info(6), tg::usage_error);
  CHECK_THROWS_AS(r.t.config_read(0x01, 2), tg::usage_error);
}

TEST_CASE("a register read is one 1-dword mode-2 stream at BAR5 + offset and a 4-byte bulk IN") {
  rig r;
  const std::uint64_t at = 0x1000'0000 + 0xDE3 * 4;  // RCC_CONFIG_MEMSIZE
  for (int i = 0; i < 4; ++i) r.bridge.memory[at + i] = std::byte(0x10 * (i + 1));
  CHECK(r.t.bar(5).read32(0xDE3 * 4) == 0x40302010);
  REQUIRE(r.bridge.log.size() == 2);
  CHECK(r.bridge.log[0].value == 0x0F20);
  CHECK(r.bridge.log[0].index == 2);
  CHECK(le32(r.bridge.log[0].out, 0) == at);
  CHECK(le32(r.bridge.log[0].out, 8) == 1);
  CHECK(r.bridge.log[1].endpoint == 0x81);
  CHECK(r.bridge.log[1].size == 4);
}

TEST_CASE("write64 is one 2-dword stream, little-endian") {
  rig r;
  r.t.bar(2).write64(0x10, 0x1122334455667788);
  REQUIRE(r.bridge.log.size() == 2);
  CHECK(le32(r.bridge.log[0].out, 0) == 0x10);
  CHECK(le32(r.bridge.log[0].out, 4) == 0xC);  // BAR2 at 0xC_0000_0000
  CHECK(le32(r.bridge.log[0].out, 8) == 2);
  CHECK(r.bridge.log[1].size == 8);
  CHECK(r.bridge.memory.at(0xC'0000'0010) == std::byte(0x88));
  CHECK(r.bridge.memory.at(0xC'0000'0017) == std::byte(0x11));
}

TEST_CASE("a large VRAM write never issues a bulk transfer above the chunk limit") {
  rig r;
  std::vector<std::byte> data = pattern(300 * 1024, 1);
  r.t.bar(0).write(1 << 20, data);
  std::size_t largest = 0;
  for (const usb_record& rec : r.bridge.log)
    if (rec.kind == usb_record::bulk) largest = std::max(largest, rec.size);
  CHECK(largest == 65536);
  std::vector<std::byte> back(data.size());
  r.t.bar(0).read(1 << 20, back);
  CHECK(back == data);
  CHECK_THROWS_AS(r.t.bar(5).read32(2), tg::usage_error);
  CHECK_THROWS_AS(r.t.bar(5).read32(1 << 20), tg::usage_error);
}

TEST_CASE("the staging window writes through 0xF2 sectors and a bulk OUT padded to 512 bytes") {
  rig r;
  auto* w = r.t.staging();
  REQUIRE(w != nullptr);
  CHECK(w->bus_address() == 0x200000);
  CHECK(w->size() == 512 * 1024);
  CHECK(w->release_bus_address() == 0x82200C);
  std::vector<std::byte> data = pattern(1000, 2);
  w->write(0, data);
  REQUIRE(r.bridge.log.size() == 2);
  CHECK(r.bridge.log[0].request == 0xF2);
  CHECK(r.bridge.log[0].value == 2);         // two sectors
  CHECK(r.bridge.log[0].index == 0x0100);    // slot 0, one 16 KiB slot
  CHECK(r.bridge.log[1].endpoint == 0x02);
  CHECK(r.bridge.log[1].size == 1024);
  CHECK(std::equal(data.begin(), data.end(), r.bridge.sram.begin()));
  CHECK(r.bridge.sram[1000] == std::byte(0));
}

TEST_CASE("a copy-in window write in slot 16 uses AMDAllocator._copyin's framing") {
  rig r;
  std::vector<std::byte> wire = pattern(256 * 1024, 3);
  r.t.staging()->write(256 * 1024, wire);
  CHECK(r.bridge.log[0].value == 512);                 // wire / 512
  CHECK(r.bridge.log[0].index == (16 | 16 << 8));      // slot 16, 16 slots
  CHECK(r.bridge.log[1].size == 256 * 1024);
  CHECK(std::equal(wire.begin(), wire.end(), r.bridge.sram.begin() + 256 * 1024));
  CHECK_THROWS_AS(r.t.staging()->write(100, wire), tg::usage_error);  // not a slot start
}

TEST_CASE("an armed read is 0xF2 with bit 15, then a bulk IN of whole sectors keeping the asked bytes") {
  rig r;
  std::vector<std::byte> data = pattern(1000, 4);
  std::copy(data.begin(), data.end(), r.bridge.sram.begin());
  auto* w = r.t.staging();
  CHECK_THROWS_AS(w->finish_read(data), tg::usage_error);  // nothing armed
  w->arm_read(0, 1000);
  CHECK(r.bridge.log[0].value == (0x8000 | 2));
  CHECK(r.bridge.log[0].index == 0x0100);
  std::vector<std::byte> out(1000);
  w->finish_read(out);
  CHECK(out == data);
  CHECK(r.bridge.log[1].endpoint == 0x81);
  CHECK(r.bridge.log[1].size == 1024);
  CHECK(r.bridge.log[1].timeout == std::chrono::milliseconds(10000));
}

TEST_CASE("DMA memory is first fit over the SRAM at bus 0x200000 and freed regions give their space back") {
  rig r;
  auto a = r.t.allocate_dma(4096);
  auto b = r.t.allocate_dma(8192);
  CHECK(a->page_bus_addresses() == std::vector<std::uint64_t>{0x200000});
  CHECK(b->page_bus_addresses() == std::vector<std::uint64_t>{0x201000, 0x202000});
  CHECK_THROWS_AS(r.t.allocate_dma(100), tg::usage_error);
  CHECK_THROWS_WITH_AS(r.t.allocate_dma(512 * 1024),
                       "usb:3-2: bridge SRAM exhausted: asked for 524288 bytes, 512000 of 524288 free but no gap "
                       "that large (DMA memory and the staging window share the SRAM; release DMA regions you no "
                       "longer need)",
                       tg::device_error);
  a.reset();  // the first page is a gap now: a page fits there, two pages go after b
  auto c = r.t.allocate_dma(8192);
  CHECK(c->page_bus_addresses().front() == 0x203000);
  auto d = r.t.allocate_dma(4096);
  CHECK(d->page_bus_addresses().front() == 0x200000);
  b.reset();
  c.reset();
  d.reset();
  // Everything back: the whole SRAM again, twice in a row (the PSP staging of two boots).
  for (int i = 0; i < 2; ++i) CHECK(r.t.allocate_dma(512 * 1024)->page_bus_addresses().front() == 0x200000);
}

TEST_CASE("a region from before a reset gives nothing back to the allocations made after it") {
  rig r;
  auto old = r.t.allocate_dma(4096);
  r.t.reset();
  auto fresh = r.t.allocate_dma(4096);
  CHECK(fresh->page_bus_addresses().front() == 0x200000);
  old.reset();  // must not free `fresh`'s page
  CHECK(r.t.allocate_dma(4096)->page_bus_addresses().front() == 0x201000);
}

TEST_CASE("the copy-in fence is the little-endian u64 at XDATA 0xA800 (bus 0x820800), read with one 0xE4") {
  rig r;
  tg::transport::staging_window* w = r.t.staging();
  CHECK(w->fence_bus_address() == 0x820800);
  for (int i = 0; i < 8; ++i) r.bridge.xdata[0xA800 + i] = std::uint8_t(0x10 + i);
  CHECK(w->read_fence() == 0x1716151413121110ull);
  REQUIRE(r.bridge.log.size() == 1);
  CHECK(r.bridge.log[0].request == 0xE4);
  CHECK(r.bridge.log[0].value == 0xA800);
}

TEST_CASE("DMA writes use 0xF2 from a slot start and 0xE5 per byte elsewhere; reads use 0xE4") {
  rig r;
  auto a = r.t.allocate_dma(4096);
  std::vector<std::byte> page = pattern(4096, 5);
  a->write(0, page);
  CHECK(r.bridge.log[0].request == 0xF2);
  CHECK(r.bridge.log[1].size == 4096);
  r.bridge.log.clear();
  std::vector<std::byte> three = pattern(3, 6);
  a->write(16, three);
  REQUIRE(r.bridge.log.size() == 3);
  CHECK(r.bridge.log[0].request == 0xE5);
  CHECK(r.bridge.log[0].value == 0xF010);
  CHECK(r.bridge.log[0].index == std::uint16_t(three[0]));
  std::vector<std::byte> back(20);
  r.bridge.log.clear();
  a->read(0, back);
  CHECK(r.bridge.log.size() == 1);
  CHECK(r.bridge.log[0].request == 0xE4);
  CHECK(r.bridge.log[0].value == 0xF000);
  CHECK(std::equal(back.begin(), back.begin() + 16, page.begin()));
  CHECK(std::equal(back.begin() + 16, back.begin() + 19, three.begin()));
  auto b = r.t.allocate_dma(4096);  // SRAM 0x1000: beyond the XDATA-reachable 4 KiB
  CHECK_THROWS_AS(b->write(0, three), tg::usage_error);
}

TEST_CASE("reset resets the USB device and sets the link and BARs up again; windows stay valid") {
  rig r;
  tg::transport::bar_window& regs = r.t.bar(5);
  int before = r.bridge.resets;
  r.bridge.config_writes.clear();
  r.t.reset();
  CHECK(r.bridge.resets == before + 1);
  CHECK(r.bridge.config_writes.size() == 4 * 8 + 1 + 4 + 4 + 2 + 1);
  CHECK(&r.t.bar(5) == &regs);
  CHECK(r.t.allocate_dma(512 * 1024)->size() == 512 * 1024);  // allocations start over
}

TEST_CASE("a second transport on the same bridge is refused by the process lock") {
  rig r;
  CHECK_THROWS_WITH_AS(usb_transport(r.backend, r.backend.list().front(), r.options()),
                       ("usb:3-2 is in use by another process (it holds " + r.dir +
                        "/am_usb_3-2.lock); stop that process or pick another device")
                           .c_str(),
                       tg::device_error);
}
