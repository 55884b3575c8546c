// cp_start_test.cpp: GC 12's CP takes no compute queue until PFP and ME pipe 0 took their ucode
// start addresses with a pipe reset pulse (gfx_v12_0.c: gfx_v12_0_config_gfx_rs64); GC 11's does.
#include <doctest/doctest.h>

#include <string>

#include "tests/drivers/emu/emu_rig.hpp"

using namespace tg::emu;
using namespace tg::emu::test;

namespace {

bool queue_starts(emu_rig& rig) {
  pm4_ring q(rig, 4 * KiB);
  return rig.g.compute_queue().has_value();
}

}  // namespace

TEST_CASE("GC 12 refuses a compute queue before PFP and ME pipe 0 have a program counter") {
  emu_rig rig(gfx_gen::gfx12, 64 * MiB);
  const gc_registers& r = rig.g.chip().gc_reg;
  const register_fields& f = rig.g.chip().field;
  rig.g.mode1_reset();  // forget what the rig started
  rig.program_vm();
  rig.program_doorbell_routes();
  SUBCASE("nothing started") {
    CHECK_FALSE(queue_starts(rig));
    const auto faults = rig.g.faults();
    REQUIRE(faults.size() == 1);
    CHECK(faults[0].kind == fault_kind::bad_queue_setup);
    CHECK(faults[0].message.find("PFP pipe 0 never took a program counter") != std::string::npos);
  }
  SUBCASE("a start address without the reset pulse") {
    rig.g.write_register(r.cp_pfp_start, 0xC00);
    rig.g.write_register(r.cp_me_start, 0xD00);
    CHECK_FALSE(queue_starts(rig));
  }
  SUBCASE("a reset pulse without a start address") {
    rig.g.write_register(r.cp_me_cntl, f.pfp_pipe0_reset.set(f.me_pipe0_reset.set(0, 1), 1));
    rig.g.write_register(r.cp_me_cntl, 0);
    CHECK_FALSE(queue_starts(rig));
  }
  SUBCASE("PFP only") {
    rig.g.write_register(r.cp_pfp_start, 0xC00);
    rig.g.write_register(r.cp_me_cntl, f.pfp_pipe0_reset.set(0, 1));
    rig.g.write_register(r.cp_me_cntl, 0);
    CHECK_FALSE(queue_starts(rig));
    CHECK(rig.g.faults().back().message.find("ME pipe 0") != std::string::npos);
  }
  SUBCASE("both, as gfx_v12_0_config_gfx_rs64 does") {
    rig.start_gfx_pipes();
    CHECK(queue_starts(rig));
    CHECK(rig.g.faults().empty());
  }
}

TEST_CASE("GC 11 takes a compute queue without PFP / ME start addresses") {
  emu_rig rig(gfx_gen::gfx11, 64 * MiB);
  CHECK(rig.g.read_register(rig.g.chip().gc_reg.cp_pfp_start) == 0);
  CHECK(queue_starts(rig));
}
