// sdma_test.cpp: SDMA packets against dwords built from sdma_v6_0_0_pkt_open.h's bit positions.
//
// Cited as file:line in Linux 6.12.118 (Debian linux-source-6.12 6.12.118-1~deb12u1) under
// drivers/gpu/drm/amd/amdgpu/. Every header has op in bits 7:0 (pkt_open.h:108-110) and sub_op in
// bits 15:8 (:114-116). sdma_v7_0.c:40 includes the same header, so SDMA 7 shares every word here.
#include <doctest/doctest.h>

#include "runtime/queue/sdma.hpp"
#include "tests/runtime/queue/words.hpp"

using namespace tg::queue;
using namespace tg::queue::sdma;
using tg::test::check_sdma;
using tg::test::words;

namespace {

// SDMA_OP_*: COPY 1 (pkt_open.h:27), WRITE 2 (:28), FENCE 5 (:30), TRAP 6 (:31), POLL_REGMEM 8 (:33),
// CONST_FILL 11 (:36), TIMESTAMP 13 (:38); SDMA_SUBOP_TIMESTAMP_GET_GLOBAL 2 (:46).
constexpr std::uint32_t op_copy = 1, op_write = 2, op_fence = 5, op_trap = 6, op_poll_regmem = 8, op_const_fill = 11,
                        op_timestamp = 13, subop_timestamp_get_global = 2;

words emitted(auto emit) {
  cmd_buffer cb;
  emit(cb);
  return cb;
}

}  // namespace

TEST_CASE("copy_linear matches sdma_v6_0_emit_copy_buffer") {
  // sdma_v6_0.c:1697-1709: header OP(COPY) | SUB_OP(COPY_LINEAR = 0), byte_count - 1 (COUNT mask
  // 0x3FFFFFFF, pkt_open.h:152), 0 (no swap), src lo, src hi, dst lo, dst hi.
  words w = emitted([](cmd_buffer& cb) {
    emit_copy_linear(cb, gpu_va{0x0000'0002'0000'1000}, gpu_va{0x0000'0001'8000'0040}, 4096);
  });
  check_sdma(w, {op_copy, 4095, 0, 0x80000040, 0x1, 0x00001000, 0x2});
  CHECK(copy_linear_dwords == 7);
}

TEST_CASE("copy_linear splits a copy at the 4 MiB engine maximum") {
  // copy_max_bytes = 0x400000 for SDMA 6 (sdma_v6_0.c:1737) and SDMA 7 (sdma_v7_0.c:1743).
  CHECK(copy_max_bytes == 0x400000);
  SUBCASE("exactly the maximum is one packet") {
    words w = emitted([](cmd_buffer& cb) { emit_copy_linear(cb, gpu_va{0x10000000}, gpu_va{0x20000000}, 0x400000); });
    check_sdma(w, {op_copy, 0x3FFFFF, 0, 0x20000000, 0, 0x10000000, 0});
  }
  SUBCASE("10 MiB is 4 + 4 + 2 MiB with both addresses advancing, across a 4 GiB line") {
    words w = emitted([](cmd_buffer& cb) { emit_copy_linear(cb, gpu_va{0x1'FFE0'0000}, gpu_va{0x10000000}, 10 << 20); });
    check_sdma(w, {op_copy, 0x3FFFFF, 0, 0x10000000, 0, 0xFFE00000, 0x1,  //
                   op_copy, 0x3FFFFF, 0, 0x10400000, 0, 0x00200000, 0x2,  //
                   op_copy, 0x1FFFFF, 0, 0x10800000, 0, 0x00600000, 0x2});
    CHECK(copy_packets(10 << 20) == 3);
  }
  SUBCASE("one byte more than the maximum is a second one-byte packet") {
    words w = emitted([](cmd_buffer& cb) { emit_copy_linear(cb, gpu_va{0x0}, gpu_va{0x0}, 0x400001); });
    REQUIRE(w.size() == 14);
    CHECK(w[8] == 0);  // count = 1 byte - 1
  }
  SUBCASE("nothing to copy emits nothing") {
    CHECK(emitted([](cmd_buffer& cb) { emit_copy_linear(cb, gpu_va{0}, gpu_va{0}, 0); }).empty());
  }
}

TEST_CASE("const_fill matches sdma_v6_0_emit_fill_buffer and splits at 4 MiB") {
  // sdma_v6_0.c:1724-1734: OP(CONST_FILL), dst lo, dst hi, src_data, byte_count - 1 (COUNT mask
  // 0x3FFFFFFF, pkt_open.h:4391); fill_max_bytes 0x400000 (sdma_v6_0.c:1741, sdma_v7_0.c:1746).
  words w = emitted([](cmd_buffer& cb) { emit_const_fill(cb, gpu_va{0x3'0000'0000}, 0xDEADBEEF, 0x600000); });
  check_sdma(w, {op_const_fill, 0x00000000, 0x3, 0xDEADBEEF, 0x3FFFFF,  //
                 op_const_fill, 0x00400000, 0x3, 0xDEADBEEF, 0x1FFFFF});
  cmd_buffer cb;
  CHECK_THROWS_WITH_AS(emit_const_fill(cb, gpu_va{0x1000}, 0, 6),
                       "sdma: CONSTANT_FILL of 6 bytes; the 32-bit pattern needs a multiple of 4", tg::usage_error);
  CHECK_THROWS_WITH_AS(emit_const_fill(cb, gpu_va{0x1002}, 0, 8),
                       "sdma: CONSTANT_FILL destination 0x1002 is not 4-byte aligned", tg::usage_error);
}

TEST_CASE("fence matches sdma_v6_0_ring_emit_fence") {
  // sdma_v6_0.c:357-363: OP(FENCE) | MTYPE(3) (mtype shift 16, pkt_open.h:4126), addr lo, hi, seq.
  words w = emitted([](cmd_buffer& cb) { emit_fence(cb, gpu_va{0x0000'7FFF'0000'1000}, 77); });
  check_sdma(w, {op_fence | 3u << 16, 0x00001000, 0x7FFF, 77});
  CHECK(w[0] == 0x00030005u);  // FENCE with MTYPE 3, as tinygrad's AMDCopyQueue.signal
  cmd_buffer cb;
  CHECK_THROWS_AS(emit_fence(cb, gpu_va{0x1001}, 0), tg::usage_error);
}

TEST_CASE("trap carries a 28-bit interrupt context") {
  // sdma_v6_0.c:381-382: OP(TRAP), INT_CONTEXT (mask 0x0FFFFFFF, pkt_open.h:5034).
  check_sdma(emitted([](cmd_buffer& cb) { emit_trap(cb, 0x0ABCDEF1); }), {op_trap, 0x0ABCDEF1});
  cmd_buffer cb;
  CHECK_THROWS_WITH_AS(emit_trap(cb, 0x10000000),
                       "sdma: INT_CONTEXT.int_context = 0x10000000 does not fit its mask 0xfffffff", tg::usage_error);
}

TEST_CASE("poll_regmem waits on memory like sdma_v6_0_ring_emit_pipeline_sync") {
  // sdma_v6_0.c:1170-1186: OP(POLL_REGMEM) | HDP_FLUSH(0) | FUNC(3) (shift 28, pkt_open.h:4505) |
  // MEM_POLL(1) (shift 31, :4511); addr lo, hi, reference, mask, RETRY_COUNT(0xfff) (shift 16,
  // :4552) | INTERVAL(4) (bits 15:0, :4545).
  gpu_va fence{0x0000'0001'0000'0010};
  SUBCASE("equal, as the kernel's pipeline sync (sdma_v6_0_ring_emit_pipeline_sync: 0xB0000008)") {
    check_sdma(emitted([&](cmd_buffer& cb) { emit_poll_regmem(cb, fence, compare::equal, 5); }),
               {op_poll_regmem | 3u << 28 | 1u << 31, 0x10, 0x1, 5, 0xFFFFFFFF, 0xFFFu << 16 | 4u});
  }
  SUBCASE("greater or equal, the signal wait (AMDCopyQueue.wait: 0xD0000008, 0x0FFF0004)") {
    words w = emitted([&](cmd_buffer& cb) { emit_poll_regmem(cb, fence, compare::greater_equal, 5); });
    check_sdma(w, {0xD0000008, 0x10, 0x1, 5, 0xFFFFFFFF, 0x0FFF0004});
  }
  SUBCASE("field overflow and misalignment are refused") {
    cmd_buffer cb;
    CHECK_THROWS_AS(emit_poll_regmem(cb, fence, compare::equal, 5, ~0u, 0x10000), tg::usage_error);
    CHECK_THROWS_AS(emit_poll_regmem(cb, fence, compare::equal, 5, ~0u, 4, 0x1000), tg::usage_error);
    CHECK_THROWS_AS(emit_poll_regmem(cb, gpu_va{0x12}, compare::equal, 5), tg::usage_error);
    CHECK(cb.empty());
  }
}

TEST_CASE("timestamp writes the global counter to an 8-byte aligned address") {
  // OP(TIMESTAMP) | SUB_OP(GET_GLOBAL) = 0x20D (AMDCopyQueue.timestamp); WRITE_ADDR_LO holds
  // address bits 31:3 in place (write_addr_31_3 shift 3, pkt_open.h:5003).
  words w = emitted([](cmd_buffer& cb) { emit_timestamp(cb, gpu_va{0x0000'0004'0000'0108}); });
  check_sdma(w, {op_timestamp | subop_timestamp_get_global << 8, 0x00000108, 0x4});
  CHECK(w[0] == 0x0000020Du);
  cmd_buffer cb;
  CHECK_THROWS_WITH_AS(emit_timestamp(cb, gpu_va{0x104}), "sdma: TIMESTAMP address 0x104 is not 8-byte aligned",
                       tg::usage_error);
}

TEST_CASE("write copies inline dwords like sdma_v6_0_vm_write_pte") {
  // sdma_v6_0.c:1091-1105: OP(WRITE) | SUB_OP(WRITE_LINEAR = 0), dst lo, hi, ndw - 1 (count mask
  // 0x000FFFFF, pkt_open.h:3119), data.
  words data{0x11111111, 0x22222222, 0x33333333};
  words w = emitted([&](cmd_buffer& cb) { emit_write(cb, gpu_va{0x0000'0009'0000'0020}, data); });
  check_sdma(w, {op_write, 0x20, 0x9, 2, 0x11111111, 0x22222222, 0x33333333});
  CHECK(w.size() == write_dwords(3));
  cmd_buffer cb;
  CHECK_THROWS_WITH_AS(emit_write(cb, gpu_va{0x20}, {}), "sdma: WRITE of 0 dwords; one packet writes 1..1048576",
                       tg::usage_error);
}

TEST_CASE("nop padding is zero dwords") {
  check_sdma(emitted([](cmd_buffer& cb) { emit_nop(cb, 3); }), {0, 0, 0});
}
