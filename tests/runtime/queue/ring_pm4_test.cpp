// ring_pm4_test.cpp: the compute ring's pointer units, wrap, read-pointer forms and back-pressure.
//
// Expected values come from tinygrad's AMDComputeQueue._submit (PM4 put value, wptr and doorbell in dwords; packets
// may run across the ring end) and AM_GFX.setup_ring (pointer page: wptr at +56, rptr at +128).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/runtime/queue/queue_rig.hpp"
#include "runtime/queue/ring_pm4.hpp"

using namespace tg::queue;
using namespace std::chrono_literals;
using tg::test::queue_rig;

namespace {

std::vector<std::uint32_t> counting(std::uint32_t first, std::size_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = first + std::uint32_t(i);
  return v;
}

}  // namespace

TEST_CASE("the pointer page puts the write pointer at byte 56 and the read pointer at byte 128") {
  queue_rig rig(256);
  CHECK(rig.pointers.wptr.va == rig.page.va + 56);
  CHECK(rig.pointers.rptr.va == rig.page.va + 128);
  CHECK(rig.pointers.rptr.size_bytes() == 8);
}

TEST_CASE("a new pm4 ring zeroes both pointers") {
  queue_rig rig(256);  // the arena is filled with 0xCD
  ring_pm4 ring(rig.config());
  CHECK(load64(rig.pointers.rptr, 0) == 0);
  CHECK(rig.wptr() == 0);
  CHECK(ring.put() == 0);
}

TEST_CASE("pm4 put value, write-pointer shadow and doorbell count dwords") {
  queue_rig rig(256);
  ring_pm4 ring(rig.config());
  auto a = counting(100, 12);
  ring.submit({a});
  CHECK(ring.put() == 12);
  CHECK(rig.wptr() == 12);
  CHECK(rig.bell.last == 12);
  CHECK(rig.bell.writes == 1);
  for (std::size_t i = 0; i < 12; ++i) CHECK(rig.ring_dword(i) == 100 + i);
  SUBCASE("several parts go in with one doorbell") {
    auto b = counting(200, 3), c = counting(300, 2);
    ring.submit({b, c});
    CHECK(ring.put() == 17);
    CHECK(rig.bell.writes == 2);
    CHECK(rig.ring_dword(12) == 200);
    CHECK(rig.ring_dword(15) == 300);
  }
}

TEST_CASE("pm4 packets run across the ring end") {
  queue_rig rig(256);  // 64 dwords
  ring_pm4 ring(rig.config());
  ring.submit({counting(0, 60)});
  rig.consume_to(60);
  ring.submit({counting(1000, 8)});
  CHECK(ring.put() == 68);
  CHECK(rig.wptr() == 68);  // not wrapped: the put value only grows
  for (std::size_t i = 0; i < 4; ++i) CHECK(rig.ring_dword(60 + i) == 1000 + i);
  for (std::size_t i = 0; i < 4; ++i) CHECK(rig.ring_dword(i) == 1004 + i);
}

TEST_CASE("the engine's read pointer is understood wrapped or unwrapped") {
  queue_rig rig(256);
  ring_pm4 ring(rig.config());
  ring.submit({counting(0, 60)});
  rig.consume_to(60);
  ring.submit({counting(0, 8)});  // put 68
  SUBCASE("unwrapped count") {
    rig.consume_to(66);
    CHECK(ring.read_pointer() == 66);
    CHECK(ring.in_flight() == 2);
  }
  SUBCASE("dword offset inside the ring, as gfx11 reports it") {
    rig.consume_to(2);
    CHECK(ring.read_pointer() == 66);
    rig.consume_to(62);
    CHECK(ring.read_pointer() == 62);
    CHECK(ring.in_flight() == 6);
  }
  SUBCASE("only the low 32 bits written") {
    rig.consume_to(0xFFFF'FFFF'0000'0000ull | 66);
    CHECK(ring.read_pointer() == 66);
  }
}

TEST_CASE("a pm4 ring waits for the read pointer instead of overwriting unconsumed commands") {
  queue_rig rig(256);
  // The engine moves once the ring waits for room (its wait hook has run), not after a guessed
  // time: under load the submit below could start later than any fixed sleep.
  std::atomic<bool> waiting{false};
  ring_config config = rig.config();
  config.on_wait = [&] { waiting = true; };
  ring_pm4 ring(config);
  ring.submit({counting(500, 63)});  // full: one dword stays free
  CHECK(ring.in_flight() == ring.capacity_units());
  bool untouched = false;
  std::thread engine([&] {
    while (!waiting) std::this_thread::sleep_for(1ms);
    // Nothing written over dwords the engine has not read: 63 free one, 0..8 still the old ones.
    untouched = rig.ring_dword(0) == 500 && rig.ring_dword(8) == 508 && rig.wptr() == 63;
    rig.consume_to(10);
  });
  auto start = std::chrono::steady_clock::now();
  ring.submit({counting(900, 10)});
  auto waited = std::chrono::steady_clock::now() - start;
  engine.join();
  CHECK(untouched);
  CHECK(waited >= 40ms);
  CHECK(ring.space_waits() == 1);
  CHECK(ring.put() == 73);
  CHECK(rig.ring_dword(63) == 900);
  CHECK(rig.ring_dword(8) == 909);
}

TEST_CASE("a pm4 ring whose engine stops times out naming the queue and both pointers, then stays failed") {
  queue_rig rig(256);
  ring_pm4 ring(rig.config("compute0", 30ms));
  ring.submit({counting(0, 60)});
  rig.consume_to(5);
  const char* why =
      "queue compute0: waited 30 ms for ring space without progress: 9 dwords needed, read pointer 5, write "
      "pointer 60, ring of 64 dwords (engine hung or faulted?)";
  CHECK_THROWS_WITH_AS(ring.submit({counting(0, 9)}), why, tg::device_error);
  CHECK(ring.is_failed());
  CHECK(ring.failure() == why);
  CHECK(ring.put() == 60);  // nothing was written
  rig.consume_to(60);       // even if the engine comes back, the queue stays failed
  CHECK_THROWS_WITH_AS(ring.submit({counting(0, 1)}),
                       (std::string("queue compute0 failed earlier and takes no more work: ") + why).c_str(),
                       tg::device_error);
}

TEST_CASE("a fault reported by the wait hook while waiting for ring space fails the ring") {
  queue_rig rig(256);
  ring_config c = rig.config();
  c.on_wait = [] { throw tg::device_error("ih: UTCL2 page fault at va 0x1000"); };
  ring_pm4 ring(c);
  ring.submit({counting(0, 60)});
  CHECK_THROWS_WITH_AS(ring.submit({counting(0, 9)}), "ih: UTCL2 page fault at va 0x1000", tg::device_error);
  CHECK(ring.is_failed());
  CHECK(ring.failure() == "ih: UTCL2 page fault at va 0x1000");
}

TEST_CASE("a pm4 submission larger than the ring is a usage error") {
  queue_rig rig(256);
  ring_pm4 ring(rig.config());
  CHECK_THROWS_WITH_AS(ring.submit({counting(0, 64)}),
                       "queue compute0: a submission of 64 dwords does not fit a ring of 64 dwords (at most 63); "
                       "put the commands in an indirect buffer",
                       tg::usage_error);
  CHECK_FALSE(ring.is_failed());
}

TEST_CASE("ring configurations are checked") {
  queue_rig rig(512);
  ring_config c = rig.config();
  SUBCASE("size") {
    c.ring = rig.ring.slice(0, 384);
    CHECK_THROWS_WITH_AS(ring_pm4{c},
                         "queue compute0: ring of 384 bytes; it must be a power of two of at least 256 bytes",
                         tg::usage_error);
  }
  SUBCASE("alignment") {
    c.ring = rig.ring.slice(128, 256);
    CHECK_THROWS_WITH_AS(ring_pm4{c},
                         "queue compute0: ring va 0x1234000080 is not 256-byte aligned (the engine takes va >> 8)",
                         tg::usage_error);
  }
  SUBCASE("doorbell") {
    c.bell = nullptr;
    CHECK_THROWS_WITH_AS(ring_pm4{c}, "queue compute0: no doorbell", tg::usage_error);
  }
  SUBCASE("pointer words") {
    c.rptr = rig.page.slice(4, 8);
    CHECK_THROWS_AS(ring_pm4{c}, tg::usage_error);
  }
}
