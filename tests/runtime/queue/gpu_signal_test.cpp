// gpu_signal_test.cpp: signal layout (tinygrad's HCQSignal), waits, timeouts and progress (HCQSignal.wait).
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "tests/runtime/queue/host_arena.hpp"
#include "runtime/queue/gpu_signal.hpp"
#include "runtime/queue/timeline.hpp"

using namespace tg::queue;
using namespace std::chrono_literals;

namespace {

struct signal_rig {
  tg::test::host_arena arena{4096};  // the signal lands at 0x12'3400'0000
  queue_memory mem = arena.carve(16, 16);
  gpu_signal s{"queue compute0", "timeline", mem};
};

}  // namespace

TEST_CASE("a signal is 16 bytes: the value at +0 and the timestamp at +8") {
  signal_rig r;
  CHECK(gpu_signal::size_bytes == 16);
  CHECK(r.s.value_va() == gpu_va{0x12'3400'0000});
  CHECK(r.s.timestamp_va() == gpu_va{0x12'3400'0008});
  store64(r.mem, 0, 41);
  store64(r.mem, 8, 12345);
  CHECK(r.s.value() == 41);
  CHECK(r.s.timestamp() == 12345);
  r.s.set(42);
  CHECK(load64(r.mem, 0) == 42);
}

TEST_CASE("a signal must be 8-byte aligned and 16 bytes long") {
  signal_rig r;
  CHECK_THROWS_AS(gpu_signal("q", "s", r.mem.slice(4, 12)), tg::usage_error);
  CHECK_THROWS_AS(gpu_signal("q", "s", r.mem.slice(0, 8)), tg::usage_error);
}

TEST_CASE("a signal wait returns once the value is reached") {
  signal_rig r;
  r.s.set(0);
  std::thread engine([&] {
    std::this_thread::sleep_for(20ms);
    r.s.set(7);
  });
  r.s.wait(7, 2000ms);
  engine.join();
  CHECK(r.s.value() == 7);
  r.s.wait(3, 0ms);  // already past: no waiting, even with no time
}

TEST_CASE("a signal wait that times out names the queue, the signal, the value wanted and the last value") {
  signal_rig r;
  r.s.set(3);
  CHECK_THROWS_WITH_AS(r.s.wait(5, 30ms),
                       "queue compute0: signal timeline at 0x1234000000 did not reach 5 within 30 ms without progress; "
                       "last value 3 (engine hung or faulted?)",
                       tg::device_error);
}

TEST_CASE("progress restarts the signal wait's timer") {
  signal_rig r;
  r.s.set(0);
  std::thread engine([&] {
    for (int v = 1; v <= 20; ++v) {
      std::this_thread::sleep_for(15ms);
      r.s.set(v);
    }
  });
  auto start = std::chrono::steady_clock::now();
  r.s.wait(20, 200ms);  // 300 ms in all, but never 200 ms without a change
  engine.join();
  CHECK(std::chrono::steady_clock::now() - start >= 280ms);
}

TEST_CASE("the wait hook runs while waiting and its error ends the wait") {
  signal_rig r;
  r.s.set(0);
  int calls = 0;
  wait_hook hook = [&] {
    if (++calls == 2) throw tg::device_error("ih: UTCL2 page fault at va 0x1000");
  };
  CHECK_THROWS_WITH_AS(r.s.wait(1, 5000ms, hook), "ih: UTCL2 page fault at va 0x1000", tg::device_error);
  CHECK(calls == 2);
}

TEST_CASE("a timeline hands out 1, 2, 3 and wraps only when due") {
  signal_rig r;
  r.s.set(99);
  timeline t(r.s, 2);
  CHECK(t.signal().value() == 0);  // reset on construction
  CHECK(t.last() == submission{0, 0});
  CHECK(t.is_complete(t.last()));
  CHECK(t.upcoming() == submission{1, 0});
  CHECK(t.commit() == submission{1, 0});
  CHECK(t.commit() == submission{2, 0});
  CHECK_FALSE(t.is_wrap_due());
  CHECK_FALSE(t.is_complete({2, 0}));
  t.commit();  // 3 > 2
  CHECK(t.is_wrap_due());
  store64(r.mem, 0, 3);
  CHECK(t.wrap_if_due());
  CHECK(t.signal().value() == 0);
  CHECK(t.upcoming() == submission{1, 1});
  CHECK(t.is_complete({3, 0}));  // older epochs finished before the wrap
  CHECK_FALSE(t.is_complete({1, 1}));
}

// Over the USB bridge every read of the signal is a round trip: once a read showed a value, the
// submissions up to it are complete without reading again (the value only grows in an epoch).
TEST_CASE("a timeline reads its signal only for submissions no earlier read showed complete") {
  signal_rig r;
  timeline t(r.s);
  const submission one = t.commit(), two = t.commit(), three = t.commit();
  store64(r.mem, 0, 2);
  CHECK(t.is_complete(two));
  CHECK_FALSE(t.is_complete(three));
  // A value below what was read (never written by a GPU within an epoch) shows which checks read:
  // one and two come from what was seen, three reads the signal again.
  store64(r.mem, 0, 0);
  CHECK(t.is_complete(one));
  CHECK(t.is_complete(two));
  CHECK_FALSE(t.is_complete(three));
  t.wait(two, 10ms);  // returns at once: 2 was seen
  store64(r.mem, 0, 3);
  t.wait(three, 1000ms);
  CHECK(t.is_complete(three));
}

TEST_CASE("after a wrap a timeline reads the signal again") {
  signal_rig r;
  timeline t(r.s, 2);
  t.commit();
  t.commit();
  t.commit();
  store64(r.mem, 0, 3);
  CHECK(t.is_complete(t.last()));
  REQUIRE(t.wrap_if_due());
  const submission first = t.commit();
  CHECK_FALSE(t.is_complete(first));  // the signal was reset to 0; 3 from the old epoch does not count
  store64(r.mem, 0, 1);
  CHECK(t.is_complete(first));
}

// A driver's recovery: the engine was reset with work in flight that will never run. What it
// was submitted as counts as complete (so waiting on it returns at once), and the new epoch
// counts from 1 on a signal set back to 0.
TEST_CASE("abandon_and_restart completes what was in flight and starts a new epoch") {
  signal_rig r;
  timeline t(r.s);
  const submission done = t.commit(), lost = t.commit();
  store64(r.mem, 0, 1);
  CHECK(t.is_complete(done));
  CHECK_FALSE(t.is_complete(lost));
  t.abandon_and_restart();
  CHECK(t.signal().value() == 0);
  CHECK(t.is_complete(lost));
  t.wait(lost, 10ms);  // returns at once: nothing will ever signal 2 in the old epoch
  const submission next = t.commit();
  CHECK(next == submission{1, 1});
  CHECK_FALSE(t.is_complete(next));
  store64(r.mem, 0, 1);
  CHECK(t.is_complete(next));
}
