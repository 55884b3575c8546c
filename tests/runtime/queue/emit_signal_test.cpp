// emit_signal_test.cpp: signal, timestamp and wait packets against the words nvd.h and tinygrad's ops_amd.py give.
//
// PM4: RELEASE_MEM signal 0x0070F514 / 0x20000000 and timestamp 0x00000514 / 0x60000000 at
// signal + 8 (3.5); WAIT_REG_MEM 0x15, mask all ones, interval 4 (3.3). SDMA: FENCE 0x00030005
// (4.3), POLL_REGMEM 0xD0000008 ... 0x0FFF0004 (4.5), TIMESTAMP 0x0000020D (4.6).
#include <doctest/doctest.h>

#include "tests/runtime/queue/host_arena.hpp"
#include "runtime/queue/emit_signal.hpp"
#include "tests/runtime/queue/words.hpp"

using namespace tg::queue;
using tg::test::check_pm4;
using tg::test::check_sdma;

namespace {

struct signal_rig {
  tg::test::host_arena arena{4096};  // the signal lands at 0x12'3400'0000
  gpu_signal s{"queue compute0", "timeline", arena.carve(16, 16)};
};

cmd_buffer emitted(auto emit) {
  cmd_buffer cb;
  emit(cb);
  return cb;
}

}  // namespace

TEST_CASE("a pm4 signal is RELEASE_MEM with the cache flush writing 32 bits at end of pipe") {
  signal_rig r;
  cmd_buffer cb = emitted([&](cmd_buffer& c) { emit_signal_pm4(c, r.s, 0x1234); });
  check_pm4(cb, {0xC0064900, 0x0070F514, 0x20000000, 0x34000000, 0x12, 0x1234, 0, 0});
  CHECK(cb.size() == pm4_signal_dwords);
  CHECK(cb[pm4_signal_value_dword] == 0x1234);
}

TEST_CASE("a pm4 timestamp is RELEASE_MEM of the GPU clock to signal + 8") {
  signal_rig r;
  check_pm4(emitted([&](cmd_buffer& c) { emit_timestamp_pm4(c, r.s); }),
            {0xC0064900, 0x00000514, 0x60000000, 0x34000008, 0x12, 0, 0, 0});
}

TEST_CASE("a pm4 signal wait is WAIT_REG_MEM >= on memory") {
  signal_rig r;
  cmd_buffer cb = emitted([&](cmd_buffer& c) { emit_wait_signal_pm4(c, r.s, 9); });
  check_pm4(cb, {0xC0053C00, 0x15, 0x34000000, 0x12, 9, 0xFFFFFFFF, 4});
  CHECK(cb.size() == pm4_wait_dwords);
  CHECK(cb[pm4_wait_value_dword] == 9);
}

TEST_CASE("an sdma signal is an uncached FENCE") {
  signal_rig r;
  cmd_buffer cb = emitted([&](cmd_buffer& c) { emit_signal_sdma(c, r.s, 77); });
  check_sdma(cb, {0x00030005, 0x34000000, 0x12, 77});
  CHECK(cb.size() == sdma_signal_dwords);
  CHECK(cb[sdma_signal_value_dword] == 77);
}

TEST_CASE("an sdma timestamp and wait follow tinygrad's AMDCopyQueue.timestamp and wait") {
  signal_rig r;
  check_sdma(emitted([&](cmd_buffer& c) { emit_timestamp_sdma(c, r.s); }), {0x0000020D, 0x34000008, 0x12});
  cmd_buffer cb = emitted([&](cmd_buffer& c) { emit_wait_signal_sdma(c, r.s, 5); });
  check_sdma(cb, {0xD0000008, 0x34000000, 0x12, 5, 0xFFFFFFFF, 0x0FFF0004});
  CHECK(cb[sdma_wait_value_dword] == 5);
}

TEST_CASE("signal values above 32 bits are refused: engines write and compare 32") {
  signal_rig r;
  cmd_buffer cb;
  CHECK_THROWS_WITH_AS(emit_signal_pm4(cb, r.s, 1ull << 32),
                       "queue compute0: RELEASE_MEM of signal timeline with value 4294967296; engines write and "
                       "compare 32 bits (keep timeline values below 2^32)",
                       tg::usage_error);
  CHECK_THROWS_AS(emit_signal_sdma(cb, r.s, 1ull << 32), tg::usage_error);
  CHECK_THROWS_AS(emit_wait_signal_pm4(cb, r.s, 1ull << 32), tg::usage_error);
  CHECK(cb.empty());
}
