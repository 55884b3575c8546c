// queue_compute_test.cpp: compute-queue submissions, synchronize, the hang path and timeline wrap,
// run against fake_pm4_engine.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/runtime/queue/fake_pm4_engine.hpp"
#include "tests/runtime/queue/queue_rig.hpp"
#include "runtime/queue/queue_compute.hpp"

using namespace tg::queue;
using namespace std::chrono_literals;
using tg::test::fake_pm4_engine;
using tg::test::queue_rig;

namespace {

// A 2-dword stand-in for real work: EVENT_WRITE CS_PARTIAL_FLUSH (nvd.h: PACKET3_EVENT_WRITE).
const cmd_buffer work{0xC0004600, 0x00000407};

queue_compute_config config(queue_rig& rig, std::chrono::milliseconds space_timeout = 2000ms) {
  return {.ring = rig.config("compute0", space_timeout), .signal = rig.signal};
}

fake_pm4_engine engine_for(queue_rig& rig, fake_pm4_engine::options opt = {}) {
  return fake_pm4_engine(rig.arena, rig.ring, rig.pointers.rptr, rig.pointers.wptr, std::move(opt));
}

}  // namespace

TEST_CASE("each compute submission ends with a RELEASE_MEM that raises the timeline to its value") {
  queue_rig rig(256);
  queue_compute q(config(rig));
  CHECK(q.submit(work) == submission{1, 0});
  CHECK(q.submit(work) == submission{2, 0});
  // [0] EVENT_WRITE, [2] RELEASE_MEM with its value at +5; then the same from [10].
  CHECK(rig.ring_dword(2) == 0xC0064900);
  CHECK(rig.ring_dword(3) == 0x0070F514);
  CHECK(rig.ring_dword(5) == 0x34000200);  // the signal's va, low dword
  CHECK(rig.ring_dword(7) == 1);
  CHECK(rig.ring_dword(17) == 2);
  CHECK(rig.bell.writes == 2);  // one doorbell per submission
  CHECK(q.last_submitted() == submission{2, 0});
  CHECK_FALSE(q.is_complete({1, 0}));
}

TEST_CASE("synchronize returns once the engine has run every submission") {
  queue_rig rig(256);  // 64 dwords: 200 submissions of 10 wrap the ring ~30 times
  queue_compute q(config(rig));
  fake_pm4_engine engine = engine_for(rig);
  engine.start();
  for (int i = 0; i < 200; ++i) q.submit(work);
  q.synchronize(2000ms);
  engine.stop();
  CHECK(engine.errors().empty());
  CHECK(q.timeline_signal().value() == 200);
  CHECK(engine.ring_packets() == 400);
  CHECK(q.is_complete(q.last_submitted()));
}

TEST_CASE("a stalled engine makes synchronize throw naming queue, signal, wanted and last value; it stays failed") {
  queue_rig rig(256);
  queue_compute q(config(rig));
  fake_pm4_engine engine = engine_for(rig);
  engine.hang_after(4);  // two submissions of two packets each, then nothing
  engine.start();
  for (int i = 0; i < 3; ++i) q.submit(work);
  const std::string why =
      "queue compute0: signal timeline at 0x1234000200 did not reach 3 within 50 ms without progress; last value 2 "
      "(engine hung or faulted?)";
  CHECK_THROWS_WITH_AS(q.synchronize(50ms), why.c_str(), tg::device_error);
  CHECK(q.is_failed());
  CHECK(q.failure() == why);
  const std::string failed = "queue compute0 failed earlier and takes no more work: " + why;
  CHECK_THROWS_WITH_AS(q.submit(work), failed.c_str(), tg::device_error);
  auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(q.synchronize(5000ms), failed.c_str(), tg::device_error);  // at once, no second wait
  CHECK(std::chrono::steady_clock::now() - start < 1000ms);
  engine.stop();
  CHECK(engine.errors().empty());
}

TEST_CASE("a fault reported by the wait hook fails the queue") {
  queue_rig rig(256);
  queue_compute_config c = config(rig);
  c.ring.on_wait = [] { throw tg::device_error("ih: SQ illegal instruction"); };
  queue_compute q(std::move(c));
  q.submit(work);  // no engine: it never completes
  CHECK_THROWS_WITH_AS(q.synchronize(5000ms), "ih: SQ illegal instruction", tg::device_error);
  CHECK(q.is_failed());
  CHECK_THROWS_AS(q.submit(work), tg::device_error);
}

TEST_CASE("a compute queue whose ring stays full fails") {
  queue_rig rig(256);
  queue_compute q(config(rig, 30ms));
  for (int i = 0; i < 6; ++i) q.submit(work);  // 60 of 63 dwords
  CHECK_THROWS_WITH_AS(q.submit(work),
                       "queue compute0: waited 30 ms for ring space without progress: 10 dwords needed, read pointer "
                       "0, write pointer 60, ring of 64 dwords (engine hung or faulted?)",
                       tg::device_error);
  CHECK(q.is_failed());
  CHECK(q.last_submitted() == submission{6, 0});  // the refused submission took no timeline value
  CHECK_THROWS_AS(q.synchronize(), tg::device_error);
}

TEST_CASE("the compute timeline drains and wraps once its values pass the wrap point") {
  queue_rig rig(256);
  queue_compute_config c = config(rig);
  c.timeline_wrap = 3;
  queue_compute q(std::move(c));
  std::vector<std::uint64_t> signalled;
  fake_pm4_engine engine = engine_for(rig, {.on_release = [&](const tg::test::fake_release& r) {
                                              signalled.push_back(r.value);
                                            }});
  engine.start();
  for (int i = 0; i < 3; ++i) q.submit(work);
  q.synchronize(2000ms);
  CHECK(q.timeline_signal().value() == 3);  // 3 is not past the wrap point
  CHECK(q.submit(work) == submission{4, 0});
  CHECK(q.submit(work) == submission{1, 1});  // drained, reset to 0, restarted at 1
  q.synchronize(2000ms);
  engine.stop();
  CHECK(engine.errors().empty());
  CHECK(signalled == std::vector<std::uint64_t>{1, 2, 3, 4, 1});
  CHECK(q.timeline_signal().value() == 1);
  CHECK(q.is_complete({4, 0}));
}
