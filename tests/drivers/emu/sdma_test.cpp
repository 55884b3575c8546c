// sdma_test.cpp: the SDMA queue of the emulated GPU, fed with runtime/queue's SDMA encoders
// through a ring in emulated VRAM that the driver's page tables map.
#include <doctest/doctest.h>

#include "tests/drivers/emu/emu_rig.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg::emu;
using namespace tg::emu::test;
namespace sdma = tg::queue::sdma;
using tg::queue::cmd_buffer;
using tg::queue::compare;

TEST_CASE_TEMPLATE("COPY_LINEAR is bit-exact across 4 KiB pages and 2 MiB pages", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 64 * KiB);
  buffer small = rig.alloc(64 * KiB);   // 4 KiB leaves
  buffer big = rig.alloc(6 * MiB);      // three 2 MiB leaves
  buffer other = rig.alloc(6 * MiB);
  buffer signal = rig.alloc(4 * KiB);
  const auto data = random_bytes(6 * MiB, 1);
  rig.write(other, 0, data);
  rig.write(small, 0, std::span(data).first(64 * KiB));

  cmd_buffer cb;
  // Odd offsets and lengths, so every copy crosses pages at unaligned points; 5 MiB splits into
  // two packets (4 MiB each at most, sdma.hpp copy_max_bytes).
  sdma::emit_copy_linear(cb, big.va + 3, other.va + 5, 5 * MiB + 7);
  sdma::emit_copy_linear(cb, small.va + 4093, big.va + (2 * MiB - 6001), 12001);
  sdma::emit_fence(cb, signal.va, 1);
  q.submit(cb);
  rig.g.step_until_idle();

  REQUIRE(rig.g.faults().empty());
  CHECK(rig.load32(signal, 0) == 1);
  const auto big_now = rig.read(big, 3, 5 * MiB + 7);
  CHECK(std::equal(big_now.begin(), big_now.end(), data.begin() + 5));
  const auto small_now = rig.read(small, 4093, 12001);
  // big[2 MiB - 6001 ..] holds data[2 MiB - 6001 - 3 + 5 ..]
  CHECK(std::equal(small_now.begin(), small_now.end(), data.begin() + 2 * MiB - 6001 + 2));
  CHECK(rig.g.stats().sdma_packets == 4);
  CHECK(rig.g.tlb().misses < 40);  // a 2 MiB leaf is translated once, not per page
}

TEST_CASE_TEMPLATE("CONST_FILL repeats the 32-bit pattern over a range that crosses pages", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  buffer dst = rig.alloc(3 * MiB);
  rig.write(dst, 0, std::vector<std::byte>(3 * MiB, std::byte{0xEE}));
  cmd_buffer cb;
  sdma::emit_const_fill(cb, dst.va + (2 * MiB - 8), 0xA1B2C3D4u, 4 * KiB + 16);
  q.submit(cb);
  rig.g.step_until_idle();

  REQUIRE(rig.g.faults().empty());
  CHECK(rig.load32(dst, 2 * MiB - 12) == 0xEEEEEEEEu);
  CHECK(rig.load32(dst, 2 * MiB - 8) == 0xA1B2C3D4u);
  CHECK(rig.load32(dst, 2 * MiB + 4 * KiB + 4) == 0xA1B2C3D4u);
  CHECK(rig.load32(dst, 2 * MiB + 4 * KiB + 8) == 0xEEEEEEEEu);
}

TEST_CASE_TEMPLATE("FENCE writes 32 bits and leaves the signal's upper dword alone", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  buffer signal = rig.alloc(4 * KiB);
  rig.store64(signal, 0, 0xDEAD'BEEF'0000'0000ull);
  cmd_buffer cb;
  sdma::emit_fence(cb, signal.va, 0x1234);
  q.submit(cb);
  rig.g.step_until_idle();
  CHECK(rig.load64(signal, 0) == 0xDEAD'BEEF'0000'1234ull);  // only the low 32 bits (sdma_v6_0_ring_emit_fence)
}

TEST_CASE_TEMPLATE("WRITE, TIMESTAMP and TRAP", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  buffer b = rig.alloc(4 * KiB);
  cmd_buffer cb;
  const std::uint32_t words[] = {1, 2, 3, 0xFFFFFFFFu};
  sdma::emit_write(cb, b.va + 4, words);
  sdma::emit_timestamp(cb, b.va + 64);
  sdma::emit_timestamp(cb, b.va + 72);
  sdma::emit_trap(cb, 0x0ABCDEF);
  q.submit(cb);
  rig.g.step_until_idle();

  REQUIRE(rig.g.faults().empty());
  for (unsigned i = 0; i < 4; ++i) CHECK(rig.load32(b, 4 + 4 * i) == words[i]);
  const std::uint64_t t0 = rig.load64(b, 64), t1 = rig.load64(b, 72);
  CHECK(t0 > 0);
  CHECK(t1 >= t0);
  const auto irqs = rig.g.interrupts();
  REQUIRE(irqs.size() == 1);
  CHECK(irqs[0].source == interrupt_source::sdma_trap);
  CHECK(irqs[0].context == 0x0ABCDEF);
}

TEST_CASE_TEMPLATE("POLL_REGMEM holds the queue until memory satisfies it", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  buffer sig = rig.alloc(4 * KiB);
  cmd_buffer cb;
  sdma::emit_poll_regmem(cb, sig.va, compare::greater_equal, 5);
  sdma::emit_fence(cb, sig.va + 8, 77);
  q.submit(cb);

  run_summary r = rig.g.step_until_idle();
  CHECK(r.waiting);
  CHECK(rig.g.sdma_queue()->waiting);
  CHECK(rig.load32(sig, 8) == 0);
  rig.store32(sig, 0, 4);
  CHECK(rig.g.step_until_idle().waiting);
  rig.store32(sig, 0, 5);
  r = rig.g.step_until_idle();
  CHECK_FALSE(r.waiting);
  CHECK(rig.load32(sig, 8) == 77);
  CHECK(q.rptr() == q.put());
}

TEST_CASE_TEMPLATE("the SDMA ring wraps and its read pointer is written back in bytes", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 256);  // 64 dwords: every few submissions wrap
  buffer sig = rig.alloc(4 * KiB);
  for (std::uint32_t i = 1; i <= 100; ++i) {
    cmd_buffer cb;
    sdma::emit_fence(cb, sig.va, i);
    sdma::emit_fence(cb, sig.va + 4, 2 * i);
    sdma::emit_write(cb, sig.va + 8, std::vector<std::uint32_t>{i, i + 1, i + 2});
    q.submit(cb);  // 60 bytes; the tail gets NOPs when it does not fit
    rig.g.step_until_idle();
    REQUIRE(rig.load32(sig, 0) == i);
    REQUIRE(rig.load32(sig, 16) == i + 2);
  }
  CHECK(q.put() > 20 * 256);
  CHECK(q.rptr() == q.put());
  const auto s = rig.g.sdma_queue();
  CHECK(s->rptr == q.put());
  CHECK(rig.g.read_register(rig.g.chip().sdma_reg.rb_rptr) == std::uint32_t(q.put()));
  CHECK(rig.g.faults().empty());
}

TEST_CASE_TEMPLATE("an SDMA packet that straddles the ring end is a fault, not a wrap", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 256);
  buffer sig = rig.alloc(4 * KiB);
  cmd_buffer pad(60, 0);  // 60 NOPs: the next packet starts 16 bytes before the end
  q.submit(pad);
  rig.g.step_until_idle();
  cmd_buffer cb;
  sdma::emit_copy_linear(cb, sig.va, sig.va + 64, 4);  // 28 bytes
  q.copy_in(cb);  // no padding: it wraps in the ring
  q.publish();
  rig.g.step_until_idle();
  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::bad_packet);
  CHECK(faults[0].stream_offset == 240);
  CHECK(faults[0].message.find("straddles the ring end") != std::string::npos);
  CHECK(rig.g.sdma_queue()->halted);
}

TEST_CASE_TEMPLATE("an unknown SDMA opcode is reported with its ring offset", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  buffer sig = rig.alloc(4 * KiB);
  cmd_buffer cb;
  sdma::emit_fence(cb, sig.va, 1);
  cb.push_back(0x0000'00FEu);  // opcode 0xFE
  sdma::emit_fence(cb, sig.va, 2);
  q.submit(cb);
  rig.g.step_until_idle();

  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::bad_packet);
  CHECK(faults[0].engine == engine_id::sdma);
  CHECK(faults[0].stream_offset == 16);  // after the 4-dword FENCE
  CHECK(faults[0].packet_va == q.ring.va + 16);
  CHECK(faults[0].header == 0xFEu);
  CHECK(describe(faults[0]).find("SDMA opcode 254") != std::string::npos);
  CHECK(rig.load32(sig, 0) == 1);  // the fence after it never ran
  CHECK(rig.g.sdma_queue()->halted);
  CHECK(rig.g.sdma_queue()->rptr == 16);
}

TEST_CASE_TEMPLATE("a doorbell that publishes more than the ring holds is an overrun", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 256);
  rig.g.write_doorbell64(sdma_ring::doorbell, 512);
  rig.g.step_until_idle();
  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::protocol);
  CHECK(faults[0].message.find("ring overrun") != std::string::npos);
  CHECK(rig.g.sdma_queue()->halted);
}

TEST_CASE_TEMPLATE("a doorbell ahead of the write-pointer shadow is reported", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  buffer sig = rig.alloc(4 * KiB);
  cmd_buffer cb;
  sdma::emit_fence(cb, sig.va, 9);
  q.copy_in(cb);
  rig.g.write_doorbell64(sdma_ring::doorbell, q.put());  // the shadow still says 0
  rig.g.step_until_idle();
  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::protocol);
  CHECK(rig.load32(sig, 0) == 9);  // reported, not fatal
}

TEST_CASE_TEMPLATE("an SDMA INDIRECT buffer runs and returns to the ring", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  buffer ib = rig.alloc(4 * KiB), sig = rig.alloc(4 * KiB);
  cmd_buffer body;
  sdma::emit_fence(body, sig.va, 5);
  sdma::emit_const_fill(body, sig.va + 64, 0x01020304u, 64);
  body.resize(16, 0);  // padded to 8 dwords (as tinygrad's AMDCopyQueue.bind)
  for (std::size_t i = 0; i < body.size(); ++i) rig.store32(ib, 4 * i, body[i]);
  cmd_buffer cb{0x0000'0004u, std::uint32_t(ib.va.value), std::uint32_t(ib.va.value >> 32),
                std::uint32_t(body.size()), 0, 0};  // INDIRECT (sdma_v6_0_0_pkt_open.h)
  sdma::emit_fence(cb, sig.va + 4, 6);
  q.submit(cb);
  rig.g.step_until_idle();
  REQUIRE(rig.g.faults().empty());
  CHECK(rig.load32(sig, 0) == 5);
  CHECK(rig.load32(sig, 124) == 0x01020304u);
  CHECK(rig.load32(sig, 4) == 6);
  CHECK(rig.g.stats().indirect_buffers == 1);
}
