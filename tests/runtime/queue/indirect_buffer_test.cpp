// indirect_buffer_test.cpp: IB upload, submission as INDIRECT_BUFFER (tinygrad's AMDComputeQueue.bind) and the reuse
// protocol: no patching while the GPU may read the IB (as tinygrad/runtime/graph/hcq.py: HCQGraph waits first).
#include <doctest/doctest.h>

#include <chrono>

#include "tests/runtime/queue/fake_pm4_engine.hpp"
#include "tests/runtime/queue/queue_rig.hpp"
#include "runtime/queue/queue_compute.hpp"

using namespace tg::queue;
using namespace std::chrono_literals;
using tg::test::queue_rig;

namespace {

// EVENT_WRITE CS_PARTIAL_FLUSH, then a 3-dword NOP (nvd.h: PACKET3_EVENT_WRITE, PACKET3_NOP).
const cmd_buffer recorded{0xC0004600, 0x00000407, 0xC0011000, 0, 0};

struct ib_rig {
  queue_rig rig{256};
  queue_memory ib_memory = rig.arena.carve(64);  // at 0x1234000300: 5 dwords of commands, 11 of data
  queue_compute q{{.ring = rig.config("compute0", 2000ms), .signal = rig.signal}};
  indirect_buffer ib{"graph0", ib_memory, recorded};
};

}  // namespace

TEST_CASE("an IB holds the recorded commands and is submitted as INDIRECT_BUFFER then RELEASE_MEM") {
  ib_rig r;
  CHECK(r.ib.command_dwords() == 5);
  CHECK(r.ib.size_dwords() == 16);
  for (std::size_t i = 0; i < recorded.size(); ++i) CHECK(r.ib.read(i) == recorded[i]);
  CHECK(r.ib.is_idle());
  CHECK(r.q.submit_ib(r.ib) == submission{1, 0});
  CHECK(r.rig.ring_dword(0) == 0xC0023F00);               // INDIRECT_BUFFER header (nvd.h's PACKET3)
  CHECK(r.rig.ring_dword(1) == 0x34000300);               // IB address low
  CHECK(r.rig.ring_dword(2) == 0x12);                     // IB address high
  CHECK(r.rig.ring_dword(3) == (5u | 1u << 23));          // size in dwords | INDIRECT_BUFFER_VALID
  CHECK(r.rig.ring_dword(4) == 0xC0064900);               // RELEASE_MEM
  CHECK(r.rig.ring_dword(9) == 1);                        // its value
  CHECK(r.q.pm4_ring().put() == 12);
}

TEST_CASE("patching an IB the GPU may still read is refused") {
  ib_rig r;
  r.q.submit_ib(r.ib);  // no engine: never consumed
  CHECK_FALSE(r.ib.is_idle());
  CHECK_THROWS_WITH_AS(r.ib.patch(1, 0x407),
                       "ib graph0: patch of dword 1 while queue compute0 may still read it (submission 1 not "
                       "complete); call wait_idle() first",
                       tg::usage_error);
  CHECK(r.ib.read(1) == 0x407);
  const std::uint32_t run[] = {1, 2, 3}, before = r.ib.read(6);
  CHECK_THROWS_WITH_AS(r.ib.patch_words(6, run), doctest::Contains("patch of dword 6 while queue compute0"),
                       tg::usage_error);
  CHECK(r.ib.read(6) == before);
}

TEST_CASE("a run of dwords is patched with one check, bounds included") {
  ib_rig r;
  const std::uint32_t run[] = {0xA, 0xB, 0xC};
  r.ib.patch_words(13, run);
  for (std::size_t i = 0; i < 3; ++i) CHECK(r.ib.read(13 + i) == run[i]);
  CHECK_THROWS_WITH_AS(r.ib.patch_words(14, run), "ib graph0: patch of dwords [14, 17) is outside its 16 dwords",
                       tg::usage_error);
  CHECK(r.ib.read(14) == 0xB);
}

TEST_CASE("wait_idle makes an IB patchable again") {
  ib_rig r;
  tg::test::fake_pm4_engine engine(r.rig.arena, r.rig.ring, r.rig.pointers.rptr, r.rig.pointers.wptr);
  engine.start();
  r.q.submit_ib(r.ib);
  r.ib.wait_idle(2000ms);
  CHECK(r.ib.is_idle());
  r.ib.patch(6, 0xABCD);
  r.ib.patch64(8, 0x1111'2222'3333'4444);
  CHECK(r.ib.read(6) == 0xABCD);
  CHECK(r.ib.read(8) == 0x33334444);  // little-endian: low dword first
  CHECK(r.ib.read(9) == 0x11112222);
  CHECK(r.ib.dword_va(6) == gpu_va{0x12'3400'0318});
  engine.stop();
  CHECK(engine.errors().empty());
  CHECK(engine.ib_packets() == 2);
}

TEST_CASE("waiting for an IB on a stalled engine fails its queue") {
  ib_rig r;
  r.q.submit_ib(r.ib);
  CHECK_THROWS_WITH_AS(r.ib.wait_idle(30ms),
                       "queue compute0: signal timeline at 0x1234000200 did not reach 1 within 30 ms without "
                       "progress; last value 0 (engine hung or faulted?)",
                       tg::device_error);
  CHECK(r.q.is_failed());
}

TEST_CASE("IB bounds are checked") {
  ib_rig r;
  CHECK_THROWS_WITH_AS(r.ib.patch(16, 0), "ib graph0: patch of dwords [16, 17) is outside its 16 dwords",
                       tg::usage_error);
  CHECK_THROWS_AS(r.ib.patch64(15, 0), tg::usage_error);
  CHECK_THROWS_AS(r.ib.read(16), tg::usage_error);
  CHECK_THROWS_WITH_AS(indirect_buffer("empty", r.ib_memory, {}),
                       "ib empty: 0 dwords of commands; an IB holds 1..1048575", tg::usage_error);
  cmd_buffer big(17, 0xC0001000);
  CHECK_THROWS_WITH_AS(indirect_buffer("big", r.ib_memory, big),
                       "ib big: 68 bytes of commands do not fit its 64-byte memory", tg::usage_error);
}
