// bridge_requests_test.cpp: the emulated ASM2464 bridge answers the requests of tinygrad's usb.py and system.py as
// the custom firmware does: descriptors, the link, config TLPs, BAR-routed memory streams and
// the SRAM path, checked against values from the reference driver and against the GPU seen directly.
#include "tests/drivers/emu/usb/bridge_rig.hpp"

using namespace tg::emu;
using namespace tg::emu::usb;
using namespace tg::emu::usb::test;

TEST_CASE("the bridge lists as the custom firmware's ids and serves its product string") {
  bridge_config cfg;
  cfg.bus = 3;
  cfg.address = 7;
  cfg.product = "custom test bridge";
  rig r(cfg);
  const auto devices = r.bridge.list();
  REQUIRE(devices.size() == 1);
  CHECK(devices[0].vendor_id == 0xADD1);
  CHECK(devices[0].product_id == 0x0001);
  CHECK(devices[0].bus == 3);
  CHECK(devices[0].address == 7);
  CHECK(devices[0].product_string_index == 2);

  std::array<std::uint8_t, 255> buf{};
  transfer_result t = r.h->control(0x80, 6, 0x0300, 0, std::as_writable_bytes(std::span(buf)), 1000ms);
  REQUIRE(t.status == usb_status::ok);
  CHECK(t.transferred == 4);
  CHECK(std::vector<std::uint8_t>(buf.begin(), buf.begin() + 4) == std::vector<std::uint8_t>{4, 3, 0x09, 0x04});

  t = r.h->control(0x80, 6, 0x0302, 0x0409, std::as_writable_bytes(std::span(buf)), 1000ms);
  REQUIRE(t.status == usb_status::ok);
  const std::string expected = "custom test bridge";
  CHECK(t.transferred == 2 + 2 * expected.size());
  CHECK(buf[0] == 2 + 2 * expected.size());
  CHECK(buf[1] == 3);
  std::string decoded;
  for (std::size_t i = 2; i < t.transferred; i += 2) {
    CHECK(buf[i + 1] == 0);  // UTF-16LE of ASCII
    decoded += char(buf[i]);
  }
  CHECK(decoded == expected);

  // A short wLength truncates, as a device does.
  std::array<std::uint8_t, 2> head{};
  t = r.h->control(0x80, 6, 0x0302, 0x0409, std::as_writable_bytes(std::span(head)), 1000ms);
  CHECK(t.transferred == 2);
  CHECK(head[0] == 2 + 2 * expected.size());
}

TEST_CASE("setup calls succeed and are recorded; open of another address is a device error") {
  bridge_config cfg;
  cfg.kernel_driver_attached = true;
  rig r(cfg);
  CHECK(r.h->kernel_driver_active(0));
  CHECK(r.h->detach_kernel_driver(0) == usb_status::ok);
  CHECK_FALSE(r.h->kernel_driver_active(0));
  CHECK(r.h->set_configuration(1) == usb_status::ok);
  CHECK(r.h->claim_interface(0) == usb_status::ok);
  CHECK(r.h->set_interface_alt_setting(0, 0) == usb_status::ok);
  const usb_setup_record s = r.bridge.stats().setup;
  CHECK(s.configuration == 1);
  CHECK(s.claimed_interface == 0);
  CHECK(s.alt_setting == 0);
  CHECK(s.kernel_driver_detaches == 1);

  tg::transport::usb::usb_device_info other = r.bridge.list().front();
  other.address = 99;
  CHECK_THROWS_WITH_AS(r.bridge.open(other), "emu usb bridge: no device at usb:1-99 (the emulated bridge is usb:1-2)",
                       tg::device_error);
}

TEST_CASE("PCIe boots off; 0xF3 brings the link to L0 (LTSSM 0x78) and back off") {
  rig r;
  CHECK(read_xdata8(*r.h, 0xB450) == 0);
  power_on(*r.h);
  CHECK(read_xdata8(*r.h, 0xB450) == 0x78);
  REQUIRE(vendor_out(*r.h, 0xF3, 0, 0, {}, 10000ms).status == usb_status::ok);
  CHECK(read_xdata8(*r.h, 0xB450) == 0);
}

TEST_CASE("with a link that never trains, power-on leaves LTSSM short of L0 and the GPU unreachable") {
  bridge_config cfg;
  cfg.link_trains = false;
  rig r(cfg);
  power_on(*r.h);
  CHECK(read_xdata8(*r.h, 0xB450) != 0x78);
  setup_bridge_buses(*r.h);
  const completion c = config_read(*r.h, 4, 0x00);
  CHECK(c.return_status != 0);  // no completion: the reference retries, then fails
}

TEST_CASE("0xE4/0xE5 reach plain XDATA and the DMA windows; the LTSSM byte ignores writes") {
  rig r;
  REQUIRE(vendor_out(*r.h, 0xE5, 0x1234, 0xAB).status == usb_status::ok);
  CHECK(read_xdata8(*r.h, 0x1234) == 0xAB);
  REQUIRE(vendor_out(*r.h, 0xE5, 0xB450, 0x78).status == usb_status::ok);
  CHECK(read_xdata8(*r.h, 0xB450) == 0);  // still off

  // XDATA 0xA800 is the copy-in fence at bus 0x820800 (tinygrad's AMDAllocator._copyin).
  const std::array<std::byte, 8> fence{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4},
                                       std::byte{5}, std::byte{6}, std::byte{7}, std::byte{8}};
  r.bridge.write(0x820800, fence);
  std::array<std::byte, 8> got{};
  REQUIRE(r.h->control(0xC0, 0xE4, 0xA800, 0, got, 1000ms).status == usb_status::ok);
  CHECK(got == fence);
  REQUIRE(vendor_out(*r.h, 0xE5, 0xB800 + 5, 0x5A).status == usb_status::ok);  // cq_buf
  std::array<std::byte, 1> cq{};
  r.bridge.read(0x822005, cq);
  CHECK(cq[0] == std::byte{0x5A});
}

TEST_CASE("the GPU's vendor id reads 0x1002 on bus 4 with Type 1 once the bridge buses are numbered") {
  rig r;
  power_on(*r.h);
  CHECK(config_read(*r.h, 4, 0x00).status == 1);  // no bridge forwards bus 4 yet: Unsupported Request
  setup_bridge_buses(*r.h);
  const completion c = config_read(*r.h, 4, 0x00, 2);
  CHECK(c.status == 0);
  CHECK(c.return_status == 0);
  CHECK(c.data == 0x1002);
  CHECK(config_read(*r.h, 4, 0x02, 2).data == 0x744C);  // device id of the gfx11 default
  CHECK(config_read(*r.h, 4, 0x00, 4, 0, 0, true).status == 1);  // Type 0 to bus 4
  CHECK(config_read(*r.h, 4, 0x00, 4, 1).status == 1);           // device 1: nobody
  CHECK(config_read(*r.h, 4, 0x00, 4, 0, 1).status == 1);        // function 1: nobody
  CHECK(r.bridge.stats().unsupported_requests == 4);
}

TEST_CASE("bridge port config writes (Type 0 on bus 0, Type 1 beyond) read back; identity is read-only") {
  rig r;
  CHECK(config_write(*r.h, 0, 0x18, 0x00040100).status == 0);
  CHECK(config_read(*r.h, 0, 0x18).data == 0x00040100);
  CHECK(config_read(*r.h, 0, 0x0E, 1).data == 0x01);  // header type 1
  CHECK(config_read(*r.h, 0, 0x0A, 2).data == 0x0604);  // PCI-to-PCI bridge
  // Bus 1 is reachable now that port 0 forwards 1..4.
  CHECK(config_write(*r.h, 1, 0x18, 0x00040201).status == 0);
  CHECK(config_read(*r.h, 1, 0x19, 1).data == 0x02);
  CHECK(config_write(*r.h, 1, 0x24, 0xBEEF, 2).status == 0);
  CHECK(config_read(*r.h, 1, 0x24, 2).data == 0xBEEF);
  const std::uint32_t ids = config_read(*r.h, 1, 0x00).data;
  config_write(*r.h, 1, 0x00, 0x12345678);
  CHECK(config_read(*r.h, 1, 0x00).data == ids);
  // Bus 3 is not: port 2 has no bus numbers yet.
  CHECK(config_read(*r.h, 3, 0x00).status == 1);
}

TEST_CASE("BARs size and assign as the reference does; BAR5 registers, BAR2 doorbells and BAR0 VRAM stream bit-exact") {
  rig r;
  power_on(*r.h);
  setup_bridge_buses(*r.h);
  const auto bars = assign_gpu_bars(*r.h);
  CHECK(bars[0].address == pref_base);
  CHECK(bars[0].size == 64 * MiB);  // the card's whole VRAM: 64 MiB is below the usual 256 MiB BAR
  CHECK(bars[2].address == nonpref_base);
  CHECK(bars[2].size == 0x2000);
  CHECK(bars[5].address == nonpref_base + 2 * MiB);
  CHECK(bars[5].size == 2 * MiB);

  SUBCASE("a GC scratch register through BAR5") {
    // regSCRATCH_REG0: offset 0x2040 in GC segment 1 (gc_11_0_0_offset.h), base 0xA000 (navi10_ip_offset.h).
    constexpr std::uint32_t scratch_index = 0xA000 + 0x2040;
    REQUIRE(write32(*r.h, bars[5].address + 4 * scratch_index, 0xDEAD'BEEF).status == usb_status::ok);
    CHECK(r.g.read_register(scratch_index) == 0xDEAD'BEEF);
    r.g.write_register(scratch_index, 0x0BAD'F00D);
    CHECK(read32(*r.h, bars[5].address + 4 * scratch_index) == 0x0BAD'F00D);
  }
  SUBCASE("doorbells through BAR2: 8-byte stores and merged 32-bit halves") {
    std::array<std::uint32_t, 2> db{0x1111'2222, 0x3333'4444};
    REQUIRE(memory_write(*r.h, bars[2].address + 0x18, std::as_bytes(std::span(db))).status == usb_status::ok);
    CHECK(r.g.read_doorbell64(0x18) == 0x3333'4444'1111'2222ull);
    REQUIRE(write32(*r.h, bars[2].address + 0x800, 0x40).status == usb_status::ok);
    REQUIRE(write32(*r.h, bars[2].address + 0x804, 0x1).status == usb_status::ok);
    CHECK(r.g.read_doorbell64(0x800) == 0x1'0000'0040ull);
    CHECK(read32(*r.h, bars[2].address + 0x804) == 0x1);
  }
  SUBCASE("VRAM through BAR0") {
    const std::vector<std::byte> data = pattern(64 * KiB, 1);
    REQUIRE(memory_write(*r.h, bars[0].address + MiB, data).status == usb_status::ok);
    std::vector<std::byte> direct(data.size());
    r.g.vram().read({MiB}, direct);
    CHECK(direct == data);
    std::vector<std::byte> back(data.size());
    const transfer_result t = memory_read(*r.h, bars[0].address + MiB, back);
    CHECK(t.status == usb_status::ok);
    CHECK(t.transferred == back.size());
    CHECK(back == data);
  }
  SUBCASE("nothing answers outside the BARs: reads are all-ones, writes dropped and counted") {
    CHECK(read32(*r.h, 0x4000'0000) == 0xFFFF'FFFF);
    REQUIRE(write32(*r.h, 0x4000'0000, 1).status == usb_status::ok);
    CHECK(r.bridge.stats().dropped_writes == 1);
    CHECK(r.bridge.stats().unsupported_requests == 1);
  }
  SUBCASE("single memory TLPs (mode 0) with byte enables") {
    REQUIRE(send_tlp(*r.h, 0x60, 0x0F, bars[0].address + 0x100, 0xAABB'CCDD).status == usb_status::ok);
    REQUIRE(send_tlp(*r.h, 0x60, 0x02, bars[0].address + 0x100, 0x0000'1100).status == usb_status::ok);
    CHECK(r.g.vram().load32({0x100}) == 0xAABB'11DD);
    REQUIRE(send_tlp(*r.h, 0x20, 0x0F, bars[0].address + 0x100, 0).status == usb_status::ok);
    const completion c = fetch_completion(*r.h);
    CHECK(c.status == 0);
    CHECK(c.data == 0xAABB'11DD);
  }
}

TEST_CASE("memory TLPs are not decoded until COMMAND.MEMORY is set on the GPU") {
  rig r;
  power_on(*r.h);
  setup_bridge_buses(*r.h);
  const auto bars = assign_gpu_bars(*r.h);
  config_write(*r.h, 4, 0x04, 0x0, 1);
  CHECK(read32(*r.h, bars[0].address) == 0xFFFF'FFFF);
  config_write(*r.h, 4, 0x04, 0x6, 1);
  r.g.vram().store32({0}, 0x600D);
  CHECK(read32(*r.h, bars[0].address) == 0x600D);
}

TEST_CASE("an 0xF2 SRAM write lands where the GPU reads bus 0x200000 + slot x 16 KiB") {
  rig r;
  const std::vector<std::byte> data = pattern(1024, 2);
  REQUIRE(arm_sram(*r.h, false, 0, data.size()).status == usb_status::ok);
  std::vector<std::byte> copy = data;
  const transfer_result t = r.h->bulk(0x02, copy, 1000ms);
  CHECK(t.status == usb_status::ok);
  CHECK(t.transferred == data.size());
  std::vector<std::byte> seen(data.size());
  r.bridge.read(0x200000, seen);
  CHECK(seen == data);
  // XDATA 0xF000 is the same SRAM.
  CHECK(read_xdata8(*r.h, 0xF000 + 7) == std::uint8_t(data[7]));

  const std::vector<std::byte> more = pattern(16 * KiB, 3);
  REQUIRE(arm_sram(*r.h, false, 5, more.size()).status == usb_status::ok);
  copy = more;
  REQUIRE(r.h->bulk(0x02, copy, 1000ms).status == usb_status::ok);
  seen.resize(more.size());
  r.bridge.read(0x200000 + 5 * 16 * KiB, seen);
  CHECK(seen == more);
}

TEST_CASE("GPU accesses outside the bridge windows are device errors naming the address") {
  rig r;
  std::array<std::byte, 4> b{};
  CHECK_THROWS_WITH_AS(r.bridge.read(0x300000, b),
                       "emu usb bridge: GPU read of 4 bytes at bus address 0x300000 is outside the bridge's windows "
                       "(SRAM 0x200000, sys_buf 0x820000, cq_buf 0x822000)",
                       tg::device_error);
  CHECK_THROWS_AS(r.bridge.write(0x27FFFE, b), tg::device_error);  // straddles the SRAM's end
}
