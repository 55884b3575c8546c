// psp_test.cpp: the emulated PSP driven as tinygrad's AM_PSP.init_hw does: bootloader components,
// sOS alive, KM ring creation, a ring submit with its fence and response, and fault injection.
#include <doctest/doctest.h>

#include <algorithm>
#include <initializer_list>

#include "drivers/emu/gpu.hpp"
#include "drivers/emu/rlc_autoload.hpp"
#include "tests/drivers/emu/emu_rig.hpp"

using namespace tg::emu;
using tg::emu::test::gfx11;
using tg::emu::test::gfx12;

namespace {

// Protocol constants as a driver has them (Linux amdgpu_psp.h, psp_gfx_if.h).
constexpr std::uint32_t bl_kdb = 0x80000, bl_sysdrv = 0x10000, bl_sos = 0x20000;
constexpr std::uint32_t cmd_setup_tmr = 5, cmd_load_ip_fw = 6, cmd_load_toc = 0x20, cmd_autoload_rlc = 0x21;
// VRAM offsets == MC addresses: the emulated FB starts at MC 0.
constexpr std::uint64_t ring_mc = 0x200000, cmd_mc = 0x300000, fence_mc = 0x301000, msg1_mc = 0x400000;

// A small PSP driver over the mailbox registers.
class psp_driver {
 public:
  explicit psp_driver(gpu& g) : g_(g), r_(g.chip().mp_reg) {}

  bool bootloader_ready() { return (g_.read_register(r_.psp_35) & 0x80000000u) != 0; }
  void load_component(std::uint32_t id) {
    g_.write_register(r_.psp_36, std::uint32_t(msg1_mc >> 20));
    g_.write_register(r_.psp_35, id);
  }
  bool sos_alive() { return g_.read_register(r_.psp_81) != 0; }
  bool create_ring() {
    if ((g_.read_register(r_.psp_64) & 0x80000000u) == 0) return false;
    g_.write_register(r_.psp_69, std::uint32_t(ring_mc));
    g_.write_register(r_.psp_70, std::uint32_t(ring_mc >> 32));
    g_.write_register(r_.psp_71, 64 * 1024);
    g_.write_register(r_.psp_64, 2u << 16);
    return (g_.read_register(r_.psp_64) & 0x8000FFFFu) == 0x80000000u;
  }
  // Returns the fence word after the submit; the response status is at command + 864.
  std::uint32_t submit(std::uint32_t cmd_id, std::uint32_t fw_type = 0) {
    return submit_with(cmd_id, {0, 0, 0, fw_type});
  }
  // The command union (from byte 28) given word by word.
  std::uint32_t submit_with(std::uint32_t cmd_id, std::initializer_list<std::uint32_t> union_words) {
    vram& v = g_.vram();
    std::vector<std::byte> zero(1024);
    v.write({cmd_mc}, zero);
    v.store32({cmd_mc + 8}, cmd_id);
    std::uint64_t at = cmd_mc + 28;
    for (std::uint32_t w : union_words) v.store32({at}, w), at += 4;
    v.store32({cmd_mc + 864}, 0xDEAD);  // must be overwritten by the PSP
    const std::uint32_t wptr = g_.read_register(r_.psp_67);
    const std::uint64_t frame = ring_mc + std::uint64_t{wptr} * 4;
    for (unsigned i = 0; i < 16; ++i) v.store32({frame + 4 * i}, 0);
    v.store32({frame + 0}, std::uint32_t(cmd_mc));
    v.store32({frame + 4}, std::uint32_t(cmd_mc >> 32));
    v.store32({frame + 8}, 1024);
    v.store32({frame + 12}, std::uint32_t(fence_mc));
    v.store32({frame + 16}, std::uint32_t(fence_mc >> 32));
    v.store32({frame + 20}, ++fence_);
    g_.write_register(r_.psp_67, wptr + 16);
    return v.load32({fence_mc});
  }
  std::uint32_t status() { return g_.vram().load32({cmd_mc + 864}); }
  std::uint32_t fence() const { return fence_; }

  void boot() {
    for (std::uint32_t id : {bl_kdb, bl_sysdrv, bl_sos}) {
      REQUIRE(bootloader_ready());
      load_component(id);
    }
    REQUIRE(sos_alive());
    REQUIRE(create_ring());
  }

 private:
  gpu& g_;
  const mp_registers& r_;
  std::uint32_t fence_ = 0;
};

}  // namespace

TEST_CASE_TEMPLATE("the PSP boots its sOS, takes a KM ring and answers ring commands with a fence", G, gfx11, gfx12) {
  gpu g({.gen = G::gen, .vram_bytes = 64ull << 20});
  psp_driver psp(g);
  const mp_registers& r = g.chip().mp_reg;
  CHECK_FALSE(psp.sos_alive());
  CHECK((g.read_register(r.psp_64) & 0x80000000u) == 0);  // no sOS, no ring handshake
  psp.boot();
  CHECK(g.psp().ring_mc == ring_mc);
  CHECK(g.psp().ring_bytes == 64u * 1024);

  g.vram().store32({fence_mc}, 0);
  CHECK(psp.submit(cmd_load_ip_fw, 5) == 1);
  CHECK(psp.status() == 0);
  CHECK(g.read_register(r.psp_67) == 16);  // the write pointer reads back
  CHECK(psp.submit(cmd_load_toc) == 2);
  CHECK(psp.status() == 0);
  CHECK(g.vram().load32({cmd_mc + 864 + 16}) == 0x1300000u);  // TMR size for the driver (<= 19 MiB)
  CHECK(psp.submit(cmd_autoload_rlc) == 3);
  CHECK(g.psp().fences == 3);

  const std::vector<psp_command> log = g.psp_log();
  REQUIRE(log.size() == 6);
  CHECK(log[0].via == psp_command::channel::bootloader);
  CHECK(log[0].id == bl_kdb);
  CHECK(log[2].id == bl_sos);
  CHECK(log[3].via == psp_command::channel::ring);
  CHECK(log[3].id == cmd_load_ip_fw);
  CHECK(log[3].fw_type == 5);
  CHECK(log[4].id == cmd_load_toc);
  CHECK(log[5].id == cmd_autoload_rlc);
  for (std::size_t i = 0; i < 5; ++i) CHECK(log[i].problem.empty());
  // The autoload is taken, but the RLC never completes: none of its parts was loaded.
  CHECK(log[5].problem.find("missing") != std::string::npos);
  CHECK(g.read_register(g.chip().gc_reg.rlc_bootload_status) == 0);

  // A ring left by this session is seen (C2PMSG_71 != 0) and destroyed by the next.
  CHECK(g.read_register(r.psp_71) != 0);
  g.write_register(r.psp_64, 0x30000);
  CHECK((g.read_register(r.psp_64) & 0x80000000u) != 0);
  CHECK(g.read_register(r.psp_71) == 0);
  CHECK_FALSE(g.psp().ring_mc.has_value());
}

TEST_CASE("a silent PSP bootloader is never ready and never starts the sOS") {
  gpu g({.gen = gfx_gen::gfx12, .vram_bytes = 64ull << 20});
  g.set_psp_faults({.bootloader_silent = true});
  psp_driver psp(g);
  CHECK_FALSE(psp.bootloader_ready());
  psp.load_component(bl_sos);
  CHECK_FALSE(psp.sos_alive());
  CHECK_FALSE(psp.create_ring());
  REQUIRE(g.psp_log().size() == 1);
  CHECK_FALSE(g.psp_log()[0].problem.empty());
}

TEST_CASE("a silent PSP ring never fences; a failing PSP answers with its status") {
  gpu g({.gen = gfx_gen::gfx11, .vram_bytes = 64ull << 20});
  psp_driver psp(g);
  psp.boot();
  g.vram().store32({fence_mc}, 0);

  g.set_psp_faults({.ring_silent = true});
  CHECK(psp.submit(cmd_load_ip_fw, 1) == 0);  // no fence
  CHECK(psp.status() == 0xDEADu);             // no response either

  g.set_psp_faults({.command_status = 0xFFFF0007u});
  const std::uint32_t fenced = psp.submit(cmd_load_ip_fw, 2);
  CHECK(fenced == psp.fence());                         // fenced...
  CHECK(psp.status() == 0xFFFF0007u);                   // ...with a failure
  const auto log = g.psp_log();
  CHECK_FALSE(log.back().problem.empty());
}

TEST_CASE("a ring submit naming memory outside VRAM is logged and never fenced") {
  gpu g({.gen = gfx_gen::gfx12, .vram_bytes = 64ull << 20});
  psp_driver psp(g);
  psp.boot();
  const mp_registers& r = g.chip().mp_reg;
  g.vram().store32({ring_mc + 0}, 0);
  g.vram().store32({ring_mc + 4}, 0x10);  // a command buffer at MC 0x10'0000'0000: beyond VRAM
  g.write_register(r.psp_67, 16);
  REQUIRE_FALSE(g.psp_log().empty());
  CHECK(g.psp_log().back().problem.find("outside VRAM") != std::string::npos);
  CHECK(g.psp().fences == 0);
}

// amdgpu_psp.c: psp_prep_tmr_cmd_buf sets virt_phy_addr and system_phy_addr (the TMR's VRAM
// address, amdgpu_gmc_vram_pa); MP0 13.0.x refuses a SETUP_TMR without them.
TEST_CASE("MP0 13.0.0 refuses SETUP_TMR without virt_phy_addr and the TMR's physical address") {
  gpu g({.gen = gfx_gen::gfx11, .vram_bytes = 64ull << 20});
  psp_driver psp(g);
  psp.boot();
  constexpr std::uint32_t tmr = 0x1000000, size = 0x1300000, virt_phy_addr = 2, bad_parameters = 0xFFFF0006u;
  SUBCASE("the fields as the old driver left them: zero") {
    const std::uint32_t fenced = psp.submit_with(cmd_setup_tmr, {tmr, 0, size, 0, 0, 0});
    CHECK(fenced == psp.fence());  // answered, with a failure
    CHECK(psp.status() == bad_parameters);
    CHECK(g.psp_log().back().problem.find("virt_phy_addr") != std::string::npos);
  }
  SUBCASE("a physical address that is not the TMR's") {
    psp.submit_with(cmd_setup_tmr, {tmr, 0, size, virt_phy_addr, tmr + 4096, 0});
    CHECK(psp.status() == bad_parameters);
  }
  SUBCASE("as Linux fills it") {
    psp.submit_with(cmd_setup_tmr, {tmr, 0, size, virt_phy_addr, tmr, 0});
    CHECK(psp.status() == 0);
    CHECK(g.psp_log().back().problem.empty());
  }
}

TEST_CASE("MP0 14.0.2 sets its TMR up at boot and does not check SETUP_TMR's physical address") {
  gpu g({.gen = gfx_gen::gfx12, .vram_bytes = 64ull << 20});
  psp_driver psp(g);
  psp.boot();
  psp.submit_with(cmd_setup_tmr, {0x1000000, 0, 0x1300000, 0, 0, 0});
  CHECK(psp.status() == 0);
}

// amdgpu_rlc.c: amdgpu_gfx_rlc_init_microcode_v2_1 / _v2_2 / _v2_3 list the RLC parts the PSP
// loads, in amdgpu_ucode.h AMDGPU_UCODE_ID order, before AUTOLOAD_RLC.
TEST_CASE_TEMPLATE("the RLC autoload completes only after every part, the RLC ones in AMDGPU_UCODE_ID order", G, gfx11,
                   gfx12) {
  gpu g({.gen = G::gen, .vram_bytes = 64ull << 20});
  psp_driver psp(g);
  psp.boot();
  const std::uint32_t bootload = g.chip().gc_reg.rlc_bootload_status;
  std::vector<std::uint32_t> parts = autoload_required(G::gen);
  // The required list puts RLC_G before RLC_P / RLC_V and the P1 stacks; load in ID order instead.
  std::stable_partition(parts.begin(), parts.end(), [](std::uint32_t t) { return t != 8; });
  SUBCASE("all of them") {
    for (std::uint32_t t : parts) psp.submit(cmd_load_ip_fw, t);
    psp.submit(cmd_autoload_rlc);
    CHECK(g.psp_log().back().problem.empty());
    CHECK(g.read_register(bootload) == 0x80000000u);
  }
  SUBCASE("all but RLC_DRAM_BOOT") {
    for (std::uint32_t t : parts)
      if (t != 48) psp.submit(cmd_load_ip_fw, t);
    psp.submit(cmd_autoload_rlc);
    CHECK(psp.status() == 0);  // taken, never completed
    CHECK(g.psp_log().back().problem.find("RLC_DRAM_BOOT (48)") != std::string::npos);
    CHECK(g.read_register(bootload) == 0);
  }
  SUBCASE("RLC_G before RLC_IRAM") {
    for (std::uint32_t t : parts)
      if (t != 26) psp.submit(cmd_load_ip_fw, t);
    psp.submit(cmd_load_ip_fw, 26);
    psp.submit(cmd_autoload_rlc);
    CHECK(g.psp_log().back().problem.find("RLC part RLC_IRAM loaded after") != std::string::npos);
    CHECK(g.read_register(bootload) == 0);
  }
  SUBCASE("a mode-1 reset forgets the loads and the completion") {
    for (std::uint32_t t : parts) psp.submit(cmd_load_ip_fw, t);
    psp.submit(cmd_autoload_rlc);
    g.mode1_reset();
    CHECK(g.read_register(bootload) == 0);
  }
}
