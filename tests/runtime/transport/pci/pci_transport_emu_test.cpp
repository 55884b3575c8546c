// pci_transport_emu_test.cpp: the PCI transport opens and drives an emulated GPU through the
// emulated PCI host (fake sysfs, BARs, pagemap), exactly as it would a card through Linux sysfs.
#include <doctest/doctest.h>

#include <array>
#include <cstring>

#include "drivers/emu/pci/emu_pci_host.hpp"
#include "runtime/transport/pci/pci_devices.hpp"
#include "runtime/transport/pci/pci_transport.hpp"
#include <tg/core/error.hpp>

using namespace tg::transport;
using namespace tg::transport::pci;
using tg::emu::emu_pci_host;

namespace {

const std::string bus = "0000:c3:00.0";

std::shared_ptr<emu_pci_host> one_gpu_host(std::uint64_t vram_bytes = 512ull << 20) {
  auto host = std::make_shared<emu_pci_host>();
  host->add_gpu(bus, {.gen = tg::emu::gfx_gen::gfx11, .vram_bytes = vram_bytes}, 0x744C);
  return host;
}

}  // namespace

TEST_CASE("discovery over the emulated host lists its GPUs by bus id") {
  auto host = std::make_shared<emu_pci_host>();
  host->add_gpu("0000:c3:00.0", {.gen = tg::emu::gfx_gen::gfx11, .vram_bytes = 64 << 20}, 0x744C);
  host->add_gpu("0000:03:00.0", {.gen = tg::emu::gfx_gen::gfx12, .vram_bytes = 64 << 20}, 0x7590);
  host->set_driver("0000:c3:00.0", "amdgpu");
  const std::vector<device_entry> found = list_pci_devices(*host);
  REQUIRE(found.size() == 2);
  CHECK(found[0].name == "pci:0000:03:00.0");
  CHECK(found[0].device_id == 0x7590);
  CHECK(found[0].detail == "Navi44 RX 9060 XT (gfx1200), no driver bound");
  CHECK(found[1].name == "pci:0000:c3:00.0");
  CHECK(found[1].detail == "Navi31 RX 7900 XT/XTX (gfx1100), driver amdgpu bound");

  SUBCASE("no devices") {
    host->set_devices_hidden(true);
    CHECK(list_pci_devices(*host).empty());
    CHECK_THROWS_WITH_AS(open_pci_device(host, 0), "pci: no supported GPU at index 0: found 0", tg::usage_error);
  }
}

TEST_CASE("an opened GPU answers config reads and reports its BARs after growing BAR0") {
  auto host = one_gpu_host();
  pci_transport t(host, bus);
  CHECK(t.name() == "pci:0000:c3:00.0");
  CHECK(t.kind() == transport_kind::pci);
  CHECK(t.limits().cpu_mapped_vram);
  CHECK(t.config_read(0x00, 2) == 0x1002);
  CHECK(t.config_read(0x02, 2) == 0x744C);
  CHECK(t.config_read(0x0B, 1) == 0x03);
  CHECK((t.config_read(0x04, 2) & 0x6) == 0x6);  // MEMORY | MASTER
  CHECK(host->config_space(bus).bus_master());

  // BAR0 started at 256 MiB; opening selected the largest ReBAR size, all of VRAM.
  const bar_region b0 = t.bar_info(0);
  CHECK(b0.bus_address == 0x80'0000'0000ull);
  CHECK(b0.size == 512ull << 20);
  CHECK(b0.is_64bit);
  CHECK(b0.prefetchable);
  CHECK(t.bar(0).size() == 512ull << 20);
  CHECK(t.bar_info(2).size == 0x2000);
  CHECK(t.bar_info(2).bus_address == 0xE080'0000ull);
  CHECK_FALSE(t.bar_info(2).is_64bit);
  CHECK(t.bar_info(5).size == 2ull << 20);
  CHECK(t.bar_info(5).bus_address == 0xE000'0000ull);
  CHECK(t.bar_info(1).size == 0);
  CHECK_THROWS_AS(t.bar(1), tg::usage_error);
  CHECK_THROWS_AS(t.bar_info(6), tg::usage_error);
  CHECK_THROWS_AS(t.config_read(0x03, 2), tg::usage_error);
}

TEST_CASE("without resizing BAR0 keeps its initial 256 MiB") {
  auto host = one_gpu_host();
  pci_transport t(host, bus, {.resize_bar0 = false});
  CHECK(t.bar_info(0).size == 256ull << 20);
  CHECK(t.bar(0).size() == 256ull << 20);
}

TEST_CASE("RCC_CONFIG_MEMSIZE through BAR5 gives VRAM in MiB") {
  // The emulator's NBIO model answers index 0xDE3 with VRAM >> 20 (as tinygrad's AMDev._run_discovery reads it).
  auto host = one_gpu_host(64 << 20);
  pci_transport t(host, bus);
  CHECK(t.bar(5).read32(0xDE3 * 4) == 64);
  CHECK(t.bar(5).mapping() == nullptr);
}

TEST_CASE("VRAM written through BAR0 is in the GPU's VRAM and the other way round") {
  auto host = one_gpu_host(64 << 20);
  pci_transport t(host, bus);
  tg::emu::gpu& g = host->gpu_at(bus);
  t.bar(0).write32(0x1000, 0xDEAD'BEEFu);
  CHECK(g.vram().load32({0x1000}) == 0xDEAD'BEEFu);

  std::array<std::byte, 16> in{};
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = std::byte(0x40 + i);
  t.bar(0).write(0x20'0000, in);
  std::array<std::byte, 16> seen{};
  g.vram().read({0x20'0000}, seen);
  CHECK(seen == in);

  REQUIRE(t.bar(0).mapping() != nullptr);
  std::uint32_t v = 0x1234'5678;
  std::memcpy(t.bar(0).mapping() + 0x3F'FFF0, &v, 4);
  CHECK(g.vram().load32({0x3F'FFF0}) == 0x1234'5678u);
  g.vram().store32({0x500}, 77);
  CHECK(t.bar(0).read32(0x500) == 77);
  CHECK_THROWS_AS(t.bar(0).read32(0x502), tg::usage_error);
  CHECK_THROWS_AS(t.bar(0).read32(64 << 20), tg::usage_error);
}

TEST_CASE("a 64-bit doorbell store through BAR2 reaches the GPU") {
  auto host = one_gpu_host(64 << 20);
  pci_transport t(host, bus);
  t.bar(2).write64(0x800, 0x1'0000'0040ull);  // SDMA0's doorbell slot (AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0)
  CHECK(host->gpu_at(bus).read_doorbell64(0x800) == 0x1'0000'0040ull);
  CHECK(t.bar(2).read32(0x804) == 1);
  CHECK_THROWS_AS(t.bar(2).write64(0x804, 1), tg::usage_error);  // not 8-byte aligned
}

TEST_CASE("DMA memory has non-contiguous fake bus addresses that the GPU's system bus resolves") {
  auto host = one_gpu_host(64 << 20);
  pci_transport t(host, bus);
  std::unique_ptr<dma_region> r = t.allocate_dma(3 * 4096);
  const std::vector<std::uint64_t> pages = r->page_bus_addresses();
  REQUIRE(pages.size() == 3);
  for (std::size_t i = 0; i < pages.size(); ++i) {
    CHECK(pages[i] >= 0x1'0000'0000ull);
    CHECK(pages[i] % 4096 == 0);
    if (i > 0) CHECK(pages[i] != pages[i - 1] + 4096);
  }

  const std::uint64_t word = 0x0BAD'F00D'CAFE'D00Dull;
  r->write(4096 + 8, std::as_bytes(std::span(&word, 1)));
  std::uint64_t seen = 0;
  host->sysmem().read(pages[1] + 8, std::as_writable_bytes(std::span(&seen, 1)));
  CHECK(seen == word);

  // The GPU writes; the host reads through the region and its mapping.
  const std::uint32_t fence = 0x600D;
  host->sysmem().write(pages[2] + 0xFFC, std::as_bytes(std::span(&fence, 1)));
  std::uint32_t got = 0;
  std::memcpy(&got, r->mapping() + 2 * 4096 + 0xFFC, 4);
  CHECK(got == fence);

  // An access that crosses from page 0 into the hole after it is a reported error.
  std::array<std::byte, 8> buf{};
  CHECK_THROWS_AS(host->sysmem().read(pages[0] + 4092, buf), tg::device_error);
  CHECK_THROWS_AS(t.allocate_dma(100), tg::usage_error);

  r.reset();  // freed memory is unreachable from the bus
  CHECK_THROWS_AS(host->sysmem().read(pages[1], buf), tg::device_error);
  CHECK(host->sysmem().mapped_pages() == 0);
}

TEST_CASE("reset goes through sysfs and leaves the device enabled and mapped") {
  auto host = one_gpu_host(64 << 20);
  int hook_calls = 0;
  host->set_reset_hook(bus, [&](tg::emu::gpu&) { ++hook_calls; });
  pci_transport t(host, bus);
  t.reset();
  CHECK(host->reset_count(bus) == 1);
  CHECK(hook_calls == 1);
  CHECK(host->config_space(bus).bus_master());
  t.bar(0).write32(0x40, 5);
  CHECK(host->gpu_at(bus).vram().load32({0x40}) == 5);
  CHECK(t.bar(5).read32(0xDE3 * 4) == 64);
}

TEST_CASE("a bound kernel driver is refused with instructions, or unbound when asked") {
  auto host = one_gpu_host(64 << 20);
  host->set_driver(bus, "amdgpu");
  CHECK_THROWS_WITH_AS(pci_transport(host, bus),
                       "pci: driver amdgpu is bound to 0000:c3:00.0; unbind it with `echo 0000:c3:00.0 | sudo tee "
                       "/sys/bus/pci/devices/0000:c3:00.0/driver/unbind` or `sudo modprobe -r amdgpu` (every GPU it "
                       "drives), or open with unbind_driver = true",
                       tg::device_error);
  pci_transport t(host, bus, {.unbind_driver = true});
  CHECK_FALSE(host->bound_driver(bus).has_value());
}

TEST_CASE("no permission on the sysfs files is refused with what to do") {
  auto host = one_gpu_host(64 << 20);
  host->set_permission_denied(true);
  CHECK_THROWS_WITH_AS(pci_transport(host, bus),
                       "pci: no write access to /sys/bus/pci/devices/0000:c3:00.0/enable (Permission denied): run as "
                       "root or grant write access to /sys/bus/pci/devices/0000:c3:00.0/enable and the device's other "
                       "sysfs files",
                       tg::device_error);
}

TEST_CASE("a second open of the same GPU fails while the first holds its lock") {
  auto host = one_gpu_host(64 << 20);
  {
    pci_transport first(host, bus);
    CHECK_THROWS_WITH_AS(pci_transport(host, bus),
                         "pci: failed to acquire lock file emu:/tmp/am_0000:c3:00.0.lock: another process (or another "
                         "transport in this one) has 0000:c3:00.0 open; close it first",
                         tg::device_error);
  }
  std::unique_ptr<pci_transport> again = open_pci_device(host, 0);
  CHECK(again->name() == "pci:0000:c3:00.0");
}

TEST_CASE("a discovery entry opens its device; an entry of another transport is a usage error") {
  auto host = one_gpu_host(64 << 20);
  const std::vector<device_entry> found = list_pci_devices(*host);
  REQUIRE(found.size() == 1);
  CHECK(open_pci_device(host, found[0])->name() == "pci:0000:c3:00.0");
  CHECK_THROWS_WITH_AS(open_pci_device(host, device_entry{transport_kind::usb, "usb:3-2"}),
                       "pci: \"usb:3-2\" is not a PCI device entry (expected \"pci:<bus id>\")", tg::usage_error);
}

TEST_CASE("opening a bus id that is not there or not a GPU is a usage error") {
  auto host = one_gpu_host(64 << 20);
  CHECK_THROWS_WITH_AS(pci_transport(host, "0000:09:00.0"),
                       "pci: no PCI device 0000:09:00.0 (/sys/bus/pci/devices/0000:09:00.0 does not exist)",
                       tg::usage_error);
}
