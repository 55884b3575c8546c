// queue_copy_test.cpp: SDMA queue submissions, synchronize and the hang path, and many
// submissions on a small ring against fake_sdma_engine, which refuses packets that straddle the
// ring end (as tinygrad's AMDCopyQueue._submit avoids).
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <random>

#include "tests/runtime/queue/fake_sdma_engine.hpp"
#include "tests/runtime/queue/queue_rig.hpp"
#include "runtime/queue/queue_copy.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg::queue;
using namespace std::chrono_literals;
using tg::test::fake_sdma_engine;
using tg::test::queue_rig;

namespace {

queue_copy_config config(queue_rig& rig, sdma_wrap wrap = sdma_wrap::split_at_packet) {
  return {.ring = rig.config("sdma0"), .signal = rig.signal, .wrap = wrap};
}

}  // namespace

TEST_CASE("each copy submission ends with a FENCE that raises the timeline to its value") {
  queue_rig rig(256);
  queue_copy q(config(rig));
  cmd_buffer cb;
  sdma::emit_copy_linear(cb, gpu_va{0x2000}, gpu_va{0x3000}, 64);
  CHECK(q.submit(cb) == submission{1, 0});
  CHECK(rig.ring_dword(7) == 0x00030005);
  CHECK(rig.ring_dword(8) == 0x34000200);
  CHECK(rig.ring_dword(10) == 1);
  CHECK(q.sdma_ring().put() == 44);  // bytes
  CHECK(rig.bell.last == 44);
}

TEST_CASE("a stalled sdma engine makes synchronize throw, and the copy queue stays failed") {
  queue_rig rig(256);
  queue_copy q(config(rig));
  cmd_buffer none;
  q.submit(none);  // just the FENCE
  CHECK_THROWS_WITH_AS(q.synchronize(30ms),
                       "queue sdma0: signal timeline at 0x1234000200 did not reach 1 within 30 ms without progress; "
                       "last value 0 (engine hung or faulted?)",
                       tg::device_error);
  CHECK(q.is_failed());
  CHECK_THROWS_AS(q.submit(none), tg::device_error);
}

// 2000 submissions of 0-5 NOP dwords, 0-3 COPY_LINEARs of 64 bytes and the FENCE, through
// `rule`; the engine copies the bytes, so a torn or misplaced packet shows in the data too.
static void run_many_submissions(sdma_wrap rule) {
  queue_rig rig(1024, 4 << 20);
  queue_memory src = rig.arena.carve(64 * 2000), dst = rig.arena.carve(64 * 2000);
  for (std::size_t i = 0; i < src.size_bytes(); ++i) src.host_view[i] = std::byte(i * 7 + i / 251);
  queue_copy q(config(rig, rule));
  fake_sdma_engine engine(rig.arena, rig.ring, rig.pointers.rptr, rig.pointers.wptr);
  engine.start();
  std::mt19937 rng(1234);
  std::size_t copied = 0;
  for (int i = 0; i < 2000; ++i) {
    cmd_buffer cb;
    sdma::emit_nop(cb, rng() % 6);
    for (unsigned k = rng() % 4; k > 0 && copied < 2000; --k, ++copied)
      sdma::emit_copy_linear(cb, dst.va + 64 * copied, src.va + 64 * copied, 64);
    q.submit(cb);
  }
  q.synchronize(5000ms);
  engine.stop();
  CHECK(engine.errors().empty());
  CHECK(q.timeline_signal().value() == 2000);
  CHECK(std::memcmp(dst.host_view.data(), src.host_view.data(), 64 * copied) == 0);
  CHECK(copied > 1000);
}

TEST_CASE("thousands of sdma submissions on a 1 KiB ring never straddle its end and copy the right bytes") {
  SUBCASE("split_at_packet") { run_many_submissions(sdma_wrap::split_at_packet); }
  SUBCASE("whole_submission") { run_many_submissions(sdma_wrap::whole_submission); }
}
