// ring_sdma_test.cpp: the SDMA ring's byte pointers, the no-straddle wrap rule and back-pressure.
//
// Expected placements are worked out by hand from tinygrad's AMDCopyQueue._submit (the steps of the
// reference's rule, and the USB / hcq2 variant) on a 256-byte ring; a zero dword is an SDMA
// NOP, so the zeroed tail must read back as zeros (the test arena starts as 0xCD bytes).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/runtime/queue/queue_rig.hpp"
#include "runtime/queue/ring_sdma.hpp"
#include "runtime/queue/sdma.hpp"
#include "runtime/queue/sdma_packet_size.hpp"

using namespace tg::queue;
using namespace std::chrono_literals;
using tg::test::queue_rig;

namespace {

constexpr std::uint32_t fence_header = 0x00030005;  // FENCE, MTYPE 3 (AMDCopyQueue.signal)
constexpr std::uint32_t copy_header = 0x00000001;   // COPY_LINEAR (AMDCopyQueue.copy)
constexpr std::uint32_t untouched = 0xCDCDCDCD;     // the arena's fill

// FENCE(4) + COPY_LINEAR(7) + FENCE(4): 15 dwords, 60 bytes.
cmd_buffer fence_copy_fence() {
  cmd_buffer cb;
  sdma::emit_fence(cb, gpu_va{0x1000}, 1);
  sdma::emit_copy_linear(cb, gpu_va{0x2000}, gpu_va{0x3000}, 64);
  sdma::emit_fence(cb, gpu_va{0x1000}, 2);
  return cb;
}

// Moves put to byte 200 of the 256-byte ring (50 NOP dwords), all consumed: 56 bytes left before the end.
void advance_to_200(ring_sdma& ring, queue_rig& rig) {
  cmd_buffer nops;
  sdma::emit_nop(nops, 50);
  ring.submit(nops);
  rig.consume_to(200);
  REQUIRE(ring.put() == 200);
}

}  // namespace

TEST_CASE("sdma put value, write-pointer shadow and doorbell count bytes") {
  queue_rig rig(256);
  ring_sdma ring(rig.config("sdma0"));
  cmd_buffer cb;
  sdma::emit_fence(cb, gpu_va{0x1000}, 7);
  ring.submit(cb);
  CHECK(ring.put() == 16);
  CHECK(rig.wptr() == 16);
  CHECK(rig.bell.last == 16);
  CHECK(ring.unit_name() == std::string("bytes"));
}

TEST_CASE("split_at_packet keeps the packets that fit at the tail, zeroes the rest of it and starts over at 0") {
  queue_rig rig(256);
  ring_sdma ring(rig.config("sdma0"), sdma_wrap::split_at_packet);
  advance_to_200(ring, rig);
  ring.submit(fence_copy_fence());
  // FENCE ends at byte 216 and COPY at 244, both < 256; the second FENCE would end at 260.
  CHECK(rig.ring_dword(50) == fence_header);
  CHECK(rig.ring_dword(54) == copy_header);
  for (std::size_t i = 61; i < 64; ++i) CHECK(rig.ring_dword(i) == 0);  // bytes 244..255: NOPs
  CHECK(rig.ring_dword(0) == fence_header);
  CHECK(rig.ring_dword(3) == 2);
  CHECK(rig.ring_dword(4) == 0);     // the earlier NOPs, untouched
  CHECK(ring.put() == 200 + 56 + 16);  // the zeroed tail counts as consumed
  CHECK(rig.wptr() == 272);
  CHECK(rig.bell.last == 272);
}

TEST_CASE("a packet that would end exactly at the ring end goes to offset 0 (the reference's strict fit)") {
  queue_rig rig(256);
  ring_sdma ring(rig.config("sdma0"));
  advance_to_200(ring, rig);
  cmd_buffer cb;
  sdma::emit_copy_linear(cb, gpu_va{0x2000}, gpu_va{0x3000}, 64);
  sdma::emit_copy_linear(cb, gpu_va{0x2000}, gpu_va{0x3000}, 64);  // 56 bytes in all: exactly what is left
  ring.submit(cb);
  CHECK(rig.ring_dword(50) == copy_header);
  for (std::size_t i = 57; i < 64; ++i) CHECK(rig.ring_dword(i) == 0);
  CHECK(rig.ring_dword(0) == copy_header);
  CHECK(ring.put() == 200 + 56 + 28);
}

TEST_CASE("whole_submission moves every packet to offset 0 when not all of them fit") {
  queue_rig rig(256);
  ring_sdma ring(rig.config("sdma0"), sdma_wrap::whole_submission);
  advance_to_200(ring, rig);
  ring.submit(fence_copy_fence());
  for (std::size_t i = 50; i < 64; ++i) CHECK(rig.ring_dword(i) == 0);
  CHECK(rig.ring_dword(0) == fence_header);
  CHECK(rig.ring_dword(4) == copy_header);
  CHECK(rig.ring_dword(11) == fence_header);
  CHECK(ring.put() == 200 + 56 + 60);
}

TEST_CASE("place_sdma reports the tail, the zeroed bytes and what put advances by") {
  cmd_buffer cb = fence_copy_fence();
  auto check = [](sdma_placement p, std::size_t tail, std::uint64_t zeroed, std::uint64_t consumed) {
    CHECK(p.tail_dwords == tail);
    CHECK(p.zeroed_bytes == zeroed);
    CHECK(p.consumed_bytes == consumed);
  };
  check(place_sdma(cb, 0, 256, sdma_wrap::split_at_packet), 15, 0, 60);
  check(place_sdma(cb, 256 + 192, 256, sdma_wrap::split_at_packet), 15, 0, 60);  // ends at byte 252 < 256
  check(place_sdma(cb, 196, 256, sdma_wrap::split_at_packet), 11, 16, 76);        // would end at 256 exactly
  check(place_sdma(cb, 200, 256, sdma_wrap::split_at_packet), 11, 12, 72);
  check(place_sdma(cb, 200, 256, sdma_wrap::whole_submission), 0, 56, 116);
  check(place_sdma(cb, 252, 256, sdma_wrap::split_at_packet), 0, 4, 64);
}

TEST_CASE("an sdma ring waits for room for the packets and the zeroed tail") {
  queue_rig rig(256);
  // The engine moves once the ring waits for room (its wait hook has run), not after a guessed
  // time: under load the submit below could start later than any fixed sleep.
  std::atomic<bool> waiting{false};
  ring_config config = rig.config("sdma0");
  config.on_wait = [&] { waiting = true; };
  ring_sdma ring(config);
  advance_to_200(ring, rig);
  rig.consume_to(0);  // pretend the engine has read nothing: 200 of 252 bytes in flight, 72 needed
  bool waited_untouched = false;
  std::thread engine([&] {
    while (!waiting) std::this_thread::sleep_for(1ms);
    waited_untouched = rig.ring_dword(0) == 0 && rig.ring_dword(50) == untouched;
    rig.consume_to(100);
  });
  ring.submit(fence_copy_fence());
  engine.join();
  CHECK(waited_untouched);
  CHECK(ring.space_waits() == 1);
  CHECK(rig.ring_dword(0) == fence_header);
}

TEST_CASE("an sdma ring whose engine stops times out naming the queue and both pointers in bytes") {
  queue_rig rig(256);
  ring_sdma ring(rig.config("sdma0", 30ms));
  advance_to_200(ring, rig);
  rig.consume_to(0);
  CHECK_THROWS_WITH_AS(ring.submit(fence_copy_fence()),
                       "queue sdma0: waited 30 ms for ring space without progress: 72 bytes needed, read pointer 0, "
                       "write pointer 200, ring of 256 bytes (engine hung or faulted?)",
                       tg::device_error);
  CHECK(ring.is_failed());
}

TEST_CASE("an sdma submission must be whole packets") {
  queue_rig rig(256);
  ring_sdma ring(rig.config("sdma0"));
  cmd_buffer cb = fence_copy_fence();
  cb.resize(7);  // FENCE and 3 dwords of COPY_LINEAR
  CHECK_THROWS_WITH_AS(ring.submit(cb), "sdma: COPY_LINEAR packet of 7 dwords is cut off after 3", tg::usage_error);
  cmd_buffer unknown{0x00000003};
  CHECK_THROWS_WITH_AS(ring.submit(unknown),
                       "sdma: header 0x3 has op 3 sub_op 0, which tg does not encode; a ring cannot tell where the "
                       "packet ends",
                       tg::usage_error);
  CHECK(ring.put() == 0);
}

TEST_CASE("sdma packet lengths match every emitter") {
  auto length_of = [](auto emit) {
    cmd_buffer cb;
    emit(cb);
    CHECK(sdma::packet_dwords(cb) == cb.size());
    return cb.size();
  };
  CHECK(length_of([](cmd_buffer& cb) { sdma::emit_copy_linear(cb, gpu_va{0}, gpu_va{0}, 4); }) == 7);
  CHECK(length_of([](cmd_buffer& cb) { sdma::emit_const_fill(cb, gpu_va{0}, 0, 4); }) == 5);
  CHECK(length_of([](cmd_buffer& cb) { sdma::emit_fence(cb, gpu_va{0}, 0); }) == 4);
  CHECK(length_of([](cmd_buffer& cb) { sdma::emit_trap(cb); }) == 2);
  CHECK(length_of([](cmd_buffer& cb) { sdma::emit_poll_regmem(cb, gpu_va{0}, compare::equal, 0); }) == 6);
  CHECK(length_of([](cmd_buffer& cb) { sdma::emit_timestamp(cb, gpu_va{0}); }) == 3);
  CHECK(length_of([](cmd_buffer& cb) {
          const std::uint32_t data[] = {1, 2, 3};
          sdma::emit_write(cb, gpu_va{0}, data);
        }) == 7);
  CHECK(length_of([](cmd_buffer& cb) { cb = {0x00030000, 0, 0, 0}; }) == 4);  // a NOP whose count skips 3 dwords
}
