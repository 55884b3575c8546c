// am_boot_steps_test.cpp: the SMU mailbox and the PSP boot handshakes, sequenced against a fake
// transport that answers like the firmware (as tinygrad's AMDev drives it): discovery, SMU messages, the PSP
// bootloader order per MP0 version, KM ring commands, and the timeout messages.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <tg/core/error.hpp>

#include "drivers/amd/am_context.hpp"
#include "drivers/amd/ip/gmc_v11.hpp"
#include "drivers/amd/ip/psp_v13.hpp"
#include "drivers/amd/ip/smu_v13.hpp"
#include "drivers/emu/firmware/emu_firmware.hpp"
#include "tests/drivers/amd/fake_transport.hpp"

using namespace tg::amd;
using namespace std::chrono_literals;
using tg::test::fake_transport;

namespace {

constexpr std::uint64_t mp = 0x16000;  // MP0 and MP1 seg0 base of gfx11_ips()
constexpr std::uint64_t psp(unsigned n) { return mp + 0x40 + n; }
constexpr std::uint64_t smu(unsigned n) { return mp + 0x240 + n; }

std::vector<tg::test::fake_ip> ips_for(bool gfx12) {
  std::vector<tg::test::fake_ip> ips = tg::test::gfx11_ips();
  if (gfx12)
    for (auto& ip : ips) {
      if (ip.hw_id == 11) ip.major = 12;
      if (ip.hw_id == 1 || ip.hw_id == 255) ip.major = 14, ip.revision = 2;
      if (ip.hw_id == 42) ip.major = 7;
      if (ip.hw_id == 34) ip.major = 4, ip.minor = 1;
      if (ip.hw_id == 40) ip.major = 7;
    }
  return ips;
}

am_options quick() {
  am_options o;
  o.timeout = 50ms;
  return o;
}

// A PSP that answers: bootloader always ready, sOS alive after the SOS component, rings accepted,
// every ring command completed by writing its fence with status 0.
struct fake_psp {
  fake_transport& t;
  std::vector<std::uint32_t> bootloader_ids, commands, fw_types;
  explicit fake_psp(fake_transport& f) : t(f) {
    t.reg[psp(35)] = 0x80000000u;
    t.reg[psp(64)] = 0x80000000u;
    t.on_write[psp(35)] = [this](std::uint32_t v) {
      bootloader_ids.push_back(v);
      t.reg[psp(35)] = 0x80000000u;
      if (v == 0x20000) t.reg[psp(81)] = 1;
    };
    t.on_write[psp(64)] = [this](std::uint32_t) { t.reg[psp(64)] = 0x80000000u; };
    t.on_write[psp(67)] = [this](std::uint32_t wptr) { run_frame(wptr - 16); };
  }
  std::uint32_t vram32(std::uint64_t at) {
    std::uint32_t w;
    std::memcpy(&w, t.vram().data() + at, 4);
    return w;
  }
  void run_frame(std::uint32_t frame_dw) {
    const std::uint64_t ring = std::uint64_t(t.reg[psp(70)]) << 32 | t.reg[psp(69)];
    const std::uint64_t frame = ring + 4ull * frame_dw;  // fb_base is 0 here: MC address = VRAM offset
    const std::uint64_t cmd = std::uint64_t(vram32(frame + 4)) << 32 | vram32(frame);
    const std::uint64_t fence = std::uint64_t(vram32(frame + 16)) << 32 | vram32(frame + 12);
    const std::uint32_t id = vram32(cmd + 8);
    commands.push_back(id);
    if (id == 6) fw_types.push_back(vram32(cmd + 28 + 12));
    const std::uint32_t value = vram32(frame + 20);
    std::memcpy(t.vram().data() + fence, &value, 4);
  }
};

struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    char tmpl[] = "/tmp/tg_am_boot_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("the context reads discovery and picks the generation's register tables") {
  fake_transport t(64, ips_for(true));
  am_context c(t, quick());
  CHECK(c.disc.gfx_target() == "gfx1200");
  CHECK(c.gen == tg::memory::gfx_gen::gfx12);
  CHECK(c.disc.vram_bytes == 64ull << 20);
  CHECK(c.gc->table().ip == "gc_12_0_0");
  CHECK(c.mmhub->table().ip == "mmhub_4_1_0");
  CHECK(c.gc->index("regSCRATCH_REG7") == 0xC047);  // gc_12_0_0_offset.h with the navi bases
}

TEST_CASE("an SMU message writes response, argument, message and returns the argument register") {
  fake_transport t(64, ips_for(false));
  am_context c(t, quick());
  smu_v13 s(c);
  std::vector<std::uint32_t> seen;
  t.on_write[smu(66)] = [&](std::uint32_t m) {
    seen = {t.reg[smu(90)], t.reg[smu(82)], m};
    t.reg[smu(82)] = 0x4D2;
    t.reg[smu(90)] = 1;
  };
  CHECK(s.send(smu_msg::get_smu_version, 7) == 0x4D2);
  CHECK(seen == std::vector<std::uint32_t>{0, 7, 2});
  CHECK(s.is_alive());
}

TEST_CASE("a silent SMU times out with the message named") {
  fake_transport t(64, ips_for(false));
  am_context c(t, quick());
  smu_v13 s(c);
  CHECK_FALSE(s.is_alive());
  CHECK_THROWS_WITH_AS(s.send(smu_msg::enable_all_features, 0),
                       "fake:0: SMU msg 0x6 (EnableAllSmuFeatures) timeout after 50 ms (MP1 C2PMSG_90 = 0x0)",
                       tg::device_error);
}

TEST_CASE("the PSP boot loads bootloader components in order, then TOC, SMU, IP firmware and RLC autoload") {
  for (bool gfx12 : {false, true}) {
    CAPTURE(gfx12);
    temp_dir dir;
    tg::emu::write_firmware_images(dir.path, gfx12 ? tg::memory::gfx_gen::gfx12 : tg::memory::gfx_gen::gfx11, 3);
    fake_transport t(64, ips_for(gfx12));
    fake_psp answer(t);
    am_context c(t, quick());
    const firmware_set fw = load_firmware(dir.path, firmware_versions_of(c.disc));
    const tg::memory::gpu_pa msg1 = c.boot.allocate(1 << 20, 1 << 20);
    std::vector<std::byte> first_fill;
    psp_v13 p(c, {c.mc(msg1), 1 << 20, [&](std::span<const std::byte> b) {
                    if (first_fill.empty()) first_fill.assign(b.begin(), b.end());
                    c.write_vram(msg1, b);
                  }});
    p.hw_init(fw);
    // KDB, then SPL (MP0 14) or KDB again, SYS, SOC, INTF, DBG, RAS, SOS (tinygrad's AM_PSP.init_hw).
    const std::vector<std::uint32_t> order = {0x80000, 0x10000000, 0x10000, 0xB0000, 0xD0000, 0xC0000, 0xE0000, 0x20000};
    CHECK(answer.bootloader_ids == order);
    CHECK(first_fill.size() == fw.find(psp_component_type::kdb)->bytes.size());
    CHECK(t.reg[psp(36)] == std::uint32_t(c.mc(msg1) >> 20));
    // LOAD_TOC, LOAD_IP_FW (SMU), SETUP_TMR on gfx11 only (MP0 14.0.2 has a boot-time TMR), ...
    REQUIRE(answer.commands.size() >= 4);
    CHECK(answer.commands[0] == 0x20);
    CHECK(answer.commands[1] == 6);
    CHECK(answer.commands[2] == (gfx12 ? 6u : 5u));
    CHECK(answer.commands.back() == 0x21);
    CHECK(answer.fw_types.front() == gfx_fw_type::smu);
    CHECK(answer.fw_types.size() == fw.ip.size());
    CHECK(t.reg[psp(71)] == 64u << 10);  // the KM ring's size
  }
}

TEST_CASE("a PSP whose bootloader never gets ready times out naming C2PMSG_35") {
  temp_dir dir;
  tg::emu::write_firmware_images(dir.path, tg::memory::gfx_gen::gfx11, 3);
  fake_transport t(64, ips_for(false));
  am_context c(t, quick());
  const firmware_set fw = load_firmware(dir.path, firmware_versions_of(c.disc));
  psp_v13 p(c, {0x100000, 1 << 20, [](std::span<const std::byte>) {}});
  CHECK_THROWS_WITH_AS(p.hw_init(fw),
                       "fake:0: PSP bootloader ready (key database) not done after 50 ms (C2PMSG_35 0x16063 = 0x0, "
                       "waiting for bits 0x80000000 = 0x80000000)",
                       tg::device_error);
}

TEST_CASE("the TLB flush takes the MM semaphore, requests VMID 0 on engine 17 of each hub and waits for the acks") {
  fake_transport t(64, ips_for(false));
  am_context c(t, quick());
  gmc_v11 g(c);
  // gfx11 indices with the navi bases (mmhub_3_0_0_offset.h, gc_11_0_0_offset.h, navi10_ip_offset.h).
  constexpr std::uint64_t mm_sem = 0x1A762, mm_req = 0x1A774, mm_ack = 0x1A786, gc_req = 0x291C, gc_ack = 0x292E;
  t.reg[mm_sem] = 1;
  t.reg[mm_ack] = 1;
  t.reg[gc_ack] = 1;
  t.reg[0xE4D] = 0x7F000;  // REMAP_HDP_MEM_FLUSH_CNTL points at the flush register (byte offset)
  int hdp_flushes = 0, mm_reqs = 0, gc_reqs = 0;
  t.on_write[0x7F000 / 4] = [&](std::uint32_t) { ++hdp_flushes; };
  t.on_write[mm_req] = [&](std::uint32_t v) { mm_reqs += v == 0x00F80001; };
  t.on_write[gc_req] = [&](std::uint32_t v) { gc_reqs += v == 0x00F80001; };
  g.invalidate_tlb({0}, 4096);
  CHECK(hdp_flushes == 1);
  CHECK(mm_reqs == 1);
  CHECK(gc_reqs == 0);  // the GC hub is flushed only once GFX init programmed it
  CHECK(t.reg[mm_sem] == 0);  // released
  g.set_gc_hub_ready(true);
  t.reg[mm_sem] = 1;
  g.invalidate_tlb({0}, 4096);
  CHECK(gc_reqs == 1);
  t.reg[mm_ack] = 0;
  t.reg[mm_sem] = 1;
  CHECK_THROWS_WITH_AS(g.invalidate_tlb({0}, 4096),
                       doctest::Contains("MM hub TLB flush (invalidation ack) not done after 50 ms"), tg::device_error);
}

TEST_CASE("hub init programs VM_CONTEXT0 over the page table with 4 levels") {
  fake_transport t(64, ips_for(true));
  am_context c(t, quick());
  gmc_v11 g(c);
  g.init_hub(hub::mm, {0x5000}, 1ull << 45, 1ull << 44, {0x1000}, {0x2000});
  // MMHUB 4.1.0 indices with the navi bases (mmhub_4_1_0_offset.h, navi10_ip_offset.h).
  CHECK(t.reg[0x1A5CF] == (0x5000 | 1));  // PAGE_TABLE_BASE_ADDR_LO32 = root | valid
  const std::uint32_t cntl = t.reg[0x1A564];
  CHECK((cntl & 1) == 1);               // ENABLE_CONTEXT
  CHECK(((cntl >> 1) & 3) == 3);        // PAGE_TABLE_DEPTH (bits 2:1)
  CHECK(t.reg[0x1A55B] != 0);           // MX_L1_TLB_CNTL written
}
