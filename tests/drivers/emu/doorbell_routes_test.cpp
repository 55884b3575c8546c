// doorbell_routes_test.cpp: a doorbell reaches the CP or SDMA0 only through the NBIO/NBIF S2A
// entries Linux programs (nbio_v4_3.c / nbif_v6_3_1.c: *_gc_doorbell_init, *_sdma_doorbell_range);
// without them the store is dropped and the queue never starts.
#include <doctest/doctest.h>

#include "runtime/queue/pm4.hpp"
#include "runtime/queue/sdma.hpp"
#include "tests/drivers/emu/emu_rig.hpp"

using namespace tg::emu;
using namespace tg::emu::test;
namespace sdma = tg::queue::sdma;
namespace pm4 = tg::queue::pm4;
using tg::queue::cmd_buffer;

namespace {

void clear_routes(emu_rig& rig) {
  for (std::uint32_t entry : rig.g.chip().nbio_reg.s2a_entry) rig.g.write_register(entry, 0);
}

void release_value(cmd_buffer& cb, gpu_va at, std::uint32_t value) {
  pm4::release_mem r;
  r.gcr = pm4::release_gcr_flush;
  r.data = pm4::data_sel::value32;
  r.address = at;
  r.value = value;
  pm4::emit_release_mem(cb, r);
}

}  // namespace

TEST_CASE_TEMPLATE("an SDMA doorbell without the S2A SDMA route is dropped; with it the queue runs", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  clear_routes(rig);
  sdma_ring q(rig, 4 * KiB);
  buffer sig = rig.alloc(4 * KiB);
  cmd_buffer cb;
  sdma::emit_fence(cb, sig.va, 7);
  q.submit(cb);
  rig.g.step_until_idle();
  CHECK(rig.load32(sig, 0) == 0);
  CHECK(rig.g.sdma_queue()->wptr == 0);  // the write pointer never arrived
  CHECK(rig.g.stats().dropped_doorbells == 1);

  SUBCASE("the CP routes alone do not reach SDMA") {
    rig.g.write_register(rig.g.chip().nbio_reg.s2a_entry[0], emu_rig::gc_route0);
    rig.g.write_register(rig.g.chip().nbio_reg.s2a_entry[3], emu_rig::gc_route3);
    q.publish();
    rig.g.step_until_idle();
    CHECK(rig.load32(sig, 0) == 0);
  }
  SUBCASE("a range that misses the doorbell does not reach SDMA") {
    rig.g.write_register(rig.g.chip().nbio_reg.s2a_entry[2], emu_rig::sdma_route + (0x20 << 7));  // offset 0x220
    q.publish();
    rig.g.step_until_idle();
    CHECK(rig.load32(sig, 0) == 0);
  }
  SUBCASE("Linux's SDMA route (AWID 0xE, dwords 0x200 + 20, AWADDR 3) reaches it") {
    rig.program_doorbell_routes();
    q.publish();  // the same put value again: a new store
    rig.g.step_until_idle();
    CHECK(rig.load32(sig, 0) == 7);
  }
  CHECK(rig.g.faults().empty());
}

TEST_CASE_TEMPLATE("a compute doorbell without an S2A GC route is dropped; with it the queue runs", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  clear_routes(rig);
  pm4_ring q(rig, 4 * KiB);
  buffer sig = rig.alloc(4 * KiB);
  cmd_buffer cb;
  release_value(cb, sig.va, 0x5EED);
  q.submit(cb);
  rig.g.step_until_idle();
  CHECK(rig.load32(sig, 0) == 0);
  CHECK(rig.g.compute_queue()->wptr == 0);
  CHECK(rig.g.stats().dropped_doorbells == 1);

  SUBCASE("the SDMA route alone does not reach the CP") {
    rig.g.write_register(rig.g.chip().nbio_reg.s2a_entry[2], emu_rig::sdma_route);
    q.publish();
    rig.g.step_until_idle();
    CHECK(rig.load32(sig, 0) == 0);
  }
  SUBCASE("entry 3 alone (AWID 6, AWADDR 3) reaches the CP") {
    rig.g.write_register(rig.g.chip().nbio_reg.s2a_entry[3], emu_rig::gc_route3);
    q.publish();
    rig.g.step_until_idle();
    CHECK(rig.load32(sig, 0) == 0x5EED);
  }
  SUBCASE("a disabled entry 0 does not") {
    rig.g.write_register(rig.g.chip().nbio_reg.s2a_entry[0], emu_rig::gc_route0 & ~1u);
    q.publish();
    rig.g.step_until_idle();
    CHECK(rig.load32(sig, 0) == 0);
  }
  CHECK(rig.g.faults().empty());
}

TEST_CASE("a mode-1 reset clears the S2A routes with every other register") {
  emu_rig rig(gfx_gen::gfx11);
  rig.g.mode1_reset();
  for (std::uint32_t entry : rig.g.chip().nbio_reg.s2a_entry) CHECK(rig.g.read_register(entry) == 0);
}
