// smu_test.cpp: the emulated SMU mailbox (tinygrad's AM_SMU._smu_cmn_send_msg): version, feature enable,
// DRAM address, DPM queries, clock limits, unknown messages, the mode-1 reset (which clears the
// warm-boot flags and every register but keeps VRAM), and a silent SMU.
#include <doctest/doctest.h>

#include "tests/drivers/emu/emu_rig.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg::emu;
using namespace tg::emu::test;

namespace {

// The mailbox as a driver uses it: 0 to the response, the argument, the message; then read back.
struct smu_driver {
  gpu& g;
  bool debug = false;
  std::uint32_t delta = 0;  // 0, or the MP1 14.0.2 segment-1 window

  std::uint32_t resp_reg() const { return (debug ? g.chip().mp_reg.smu_debug_resp : g.chip().mp_reg.smu_resp) + delta; }
  std::uint32_t arg_reg() const { return (debug ? g.chip().mp_reg.smu_debug_arg : g.chip().mp_reg.smu_arg) + delta; }
  std::uint32_t msg_reg() const { return (debug ? g.chip().mp_reg.smu_debug_msg : g.chip().mp_reg.smu_msg) + delta; }

  // {response, result}
  std::pair<std::uint32_t, std::uint32_t> send(std::uint32_t msg, std::uint32_t arg = 0) {
    g.write_register(resp_reg(), 0);
    g.write_register(arg_reg(), arg);
    g.write_register(msg_reg(), msg);
    return {g.read_register(resp_reg()), g.read_register(arg_reg())};
  }
};

constexpr std::uint32_t ok = 1, unknown = 0xFE;
constexpr std::uint32_t get_version = 0x2, enable_all = 0x6, dram_hi = 0xE, dram_lo = 0xF, soft_min = 0x19,
                        soft_max = 0x1A, get_dpm_freq = 0x1F, mode1_reset = 0x2F, ppt_limit = 0x32;

}  // namespace

TEST_CASE_TEMPLATE("the SMU answers the boot's messages and DPM queries", G, gfx11, gfx12) {
  gpu g({.gen = G::gen, .vram_bytes = 64ull << 20});
  smu_driver smu{g};
  CHECK(g.read_register(smu.resp_reg()) == ok);  // idle at power-on

  auto [resp, version] = smu.send(get_version);
  CHECK(resp == ok);
  CHECK(version != 0);
  CHECK(smu.send(dram_hi, 0x1).first == ok);
  CHECK(smu.send(dram_lo, 0x00200000).first == ok);
  CHECK(smu.send(enable_all).first == ok);
  CHECK(g.smu().driver_dram_address == 0x1'0020'0000ull);
  CHECK(g.smu().features_enabled);

  for (std::uint32_t clock : {0u, 1u, 2u, 3u}) {  // GFXCLK, SOCCLK, UCLK, FCLK
    CAPTURE(clock);
    auto [r, count] = smu.send(get_dpm_freq, clock << 16 | 0xFF);
    REQUIRE(r == ok);
    REQUIRE(count >= 2);
    REQUIRE(count <= 16);
    std::uint32_t last = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
      auto [ri, mhz] = smu.send(get_dpm_freq, clock << 16 | i);
      CHECK(ri == ok);
      CHECK((mhz & 0x7FFFFFFF) > last);  // levels rise
      CHECK((mhz & 0x7FFFFFFF) < 5000);   // plausible MHz
      last = mhz & 0x7FFFFFFF;
    }
    CHECK(smu.send(soft_max, clock << 16 | last).first == ok);
    CHECK(smu.send(soft_min, clock << 16 | 100).first == ok);
    CHECK(g.smu().soft_max_mhz[clock] == last);
    CHECK(g.smu().soft_min_mhz[clock] == 100);
  }
  CHECK(smu.send(get_dpm_freq, 9u << 16 | 0xFF).first == 0xFFu);  // no such clock
  CHECK(smu.send(ppt_limit, 150).first == ok);
  CHECK(g.smu().ppt_limit == 150);
  CHECK(smu.send(0x7F).first == unknown);

  const auto log = g.smu_log();
  REQUIRE(log.size() >= 5);
  CHECK(log[0].id == get_version);
  CHECK(log[1].id == dram_hi);
  CHECK(log[1].argument == 0x1);
  CHECK(log.back().response == unknown);
}

TEST_CASE("MP1 14.0.2 answers in its segment-1 window as well") {
  gpu g({.gen = gfx_gen::gfx12, .vram_bytes = 64ull << 20});
  smu_driver smu{g, false, g.chip().mp_reg.smu_alias_delta};
  CHECK(smu.msg_reg() == 0xDC0082u);
  auto [r, version] = smu.send(get_version);
  CHECK(r == ok);
  CHECK(version == g.read_register(g.chip().mp_reg.smu_arg));
}

TEST_CASE_TEMPLATE("a mode-1 reset clears the warm-boot flags, the sOS and the queues but keeps VRAM", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  gpu& g = rig.g;
  const gc_registers& gc = g.chip().gc_reg;
  const mp_registers& mp = g.chip().mp_reg;
  g.write_register(gc.scratch_reg7, 0xA0000008u);  // a finished AM boot (tinygrad's AMDev.Version)
  g.write_register(gc.scratch_reg6, 1);
  g.write_register(mp.psp_35, 0x20000);  // LOAD_SOSDRV: sOS alive
  REQUIRE(g.read_register(mp.psp_81) != 0);
  sdma_ring q(rig, 4 * KiB);
  REQUIRE(g.sdma_queue().has_value());
  buffer data = rig.alloc(4 * KiB);
  rig.store64(data, 0, 0x0123456789ABCDEFull);
  // The flags outlive everything but a reset: more register traffic leaves them alone.
  rig.flush.flush();
  CHECK(g.read_register(gc.scratch_reg7) == 0xA0000008u);
  CHECK(g.read_register(gc.scratch_reg6) == 1u);

  SUBCASE("debug mailbox, message 2 (MP0 >= 14, and 13.0.0 per Linux)") {
    smu_driver smu{g, true};
    smu.send(2);
  }
  if (G::gen == gfx_gen::gfx11) {
    SUBCASE("Mode1Reset 0x2F on SMU 13.0.0") {
      smu_driver smu{g};
      smu.send(mode1_reset);
    }
  }
  CHECK(g.mode1_resets() == 1);
  CHECK(g.read_register(gc.scratch_reg7) == 0u);
  CHECK(g.read_register(gc.scratch_reg6) == 0u);
  CHECK(g.read_register(mp.psp_81) == 0u);
  CHECK_FALSE(g.psp().sos_alive);
  CHECK_FALSE(g.sdma_queue().has_value());
  CHECK(g.read_register(gc.vm_pt_base_lo) == 0u);  // the page-table base is gone too
  CHECK(g.read_register(mp.smu_resp) == ok);       // the SMU is back and idle
  CHECK(g.read_register(0xDE3) == 128u);           // power-on values are back
  CHECK(rig.load64(data, 0) == 0x0123456789ABCDEFull);
}

TEST_CASE("a silent SMU never answers") {
  gpu g({.gen = gfx_gen::gfx11, .vram_bytes = 64ull << 20});
  g.set_smu_silent(true);
  smu_driver smu{g};
  CHECK(smu.send(get_version).first == 0u);
  smu_driver debug{g, true};
  CHECK(debug.send(2).first == 0u);
  CHECK(g.mode1_resets() == 0);
  REQUIRE(g.smu_log().size() == 2);
  CHECK(g.smu_log()[0].response == 0u);
}
