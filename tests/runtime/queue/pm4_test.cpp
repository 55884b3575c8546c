// pm4_test.cpp: PM4 packets against dwords built from the kernel headers' bit positions.
//
// Expected words are written out from the numbers in the Linux 6.12.118 sources (Debian
// linux-source-6.12 6.12.118-1~deb12u1), cited as file:line under drivers/gpu/drm/amd/:
//   nvd.h:48    PACKET3(op, n) = 3 << 30 | (op & 0xFF) << 8 | (n & 0x3FFF) << 16
// and from tinygrad's ops_amd.py where the kernel has no number (the reference's choices).
#include <doctest/doctest.h>

#include "runtime/queue/pm4.hpp"
#include "tests/runtime/queue/words.hpp"

using namespace tg::queue;
using namespace tg::queue::pm4;
using tg::test::check_pm4;
using tg::test::words;

namespace {

// PACKET3(op, n) with n = payload dwords - 1, nvd.h:48.
constexpr std::uint32_t packet3(std::uint32_t op, std::uint32_t n) { return 3u << 30 | (n & 0x3FFF) << 16 | op << 8; }

// Opcodes: nvd.h:55 NOP 0x10, :61 DISPATCH_DIRECT 0x15, :116 WAIT_REG_MEM 0x3C, :138
// INDIRECT_BUFFER 0x3F, :154 EVENT_WRITE 0x46, :165 RELEASE_MEM 0x49, :258 ACQUIRE_MEM 0x58,
// :330 SET_SH_REG 0x76, :335 SET_UCONFIG_REG 0x79.
constexpr std::uint32_t op_nop = 0x10, op_dispatch_direct = 0x15, op_wait_reg_mem = 0x3C, op_indirect_buffer = 0x3F,
                        op_event_write = 0x46, op_release_mem = 0x49, op_acquire_mem = 0x58, op_set_sh_reg = 0x76,
                        op_set_uconfig_reg = 0x79;

words emitted(auto emit) {
  cmd_buffer cb;
  emit(cb);
  return cb;
}

}  // namespace

// The header values, from nvd.h's PACKET3.
static_assert(type3_header(PACKET3_WAIT_REG_MEM, 6) == 0xC0053C00);
static_assert(type3_header(PACKET3_RELEASE_MEM, 7) == 0xC0064900);
static_assert(type3_header(PACKET3_SET_SH_REG, 2) == packet3(op_set_sh_reg, 1));
static_assert(nop_single_dword == 0xFFFF1000);  // PACKET3(PACKET3_NOP, 0x3FFF): gfx_v11_0.c:6837

TEST_CASE("a type-3 header packs type, count and opcode as nvd.h's PACKET3") {
  CHECK(type3_header(PACKET3_SET_SH_REG, 2) == 0xC0017600u);
  CHECK(type3_header(PACKET3_SET_SH_REG, max_payload_dwords) == packet3(op_set_sh_reg, 0x3FFF));
  CHECK_THROWS_WITH_AS(type3_header(PACKET3_NOP, 0), "pm4: a type-3 packet carries 1..16384 payload dwords, not 0",
                       tg::usage_error);
  CHECK_THROWS_AS(type3_header(PACKET3_NOP, max_payload_dwords + 1), tg::usage_error);
}

TEST_CASE("nop pads exactly the asked number of dwords") {
  SUBCASE("one dword is the header-only NOP of gfx_v11_ring_insert_nop (gfx_v11_0.c:511-514)") {
    check_pm4(emitted([](cmd_buffer& cb) { emit_nop(cb, 1); }), {packet3(op_nop, 0x3FFF)});
  }
  SUBCASE("three dwords are one NOP with two payload dwords") {
    check_pm4(emitted([](cmd_buffer& cb) { emit_nop(cb, 3); }), {packet3(op_nop, 1), 0, 0});
  }
  SUBCASE("a run longer than one packet splits; count 0x3FFF is never used for a long NOP") {
    words w = emitted([](cmd_buffer& cb) { emit_nop(cb, 0x4001); });
    REQUIRE(w.size() == 0x4001);
    CHECK(w[0] == packet3(op_nop, 0x3FFE));
    CHECK(w[0x4000] == packet3(op_nop, 0x3FFF));
  }
  SUBCASE("zero dwords emit nothing") { CHECK(emitted([](cmd_buffer& cb) { emit_nop(cb, 0); }).empty()); }
}

TEST_CASE("set_sh_reg writes COMPUTE_PGM_LO at SH offset 0x20C") {
  // gc_11_0_0_offset.h:3954 and gc_12_0_0_offset.h:2266: regCOMPUTE_PGM_LO 0x1bac, BASE_IDX 0;
  // navi10_ip_offset.h:351 GC_BASE__INST0_SEG0 0x1260; nvd.h:331 PACKET3_SET_SH_REG_START 0x2c00.
  constexpr std::uint32_t index = 0x1260 + 0x1BAC;
  static_assert(reg_index(gfx_version::gfx11, "regCOMPUTE_PGM_LO") == index);
  static_assert(reg_index(gfx_version::gfx12, "regCOMPUTE_PGM_LO") == index);
  words values{0x00123456, 0x7F};
  check_pm4(emitted([&](cmd_buffer& cb) { emit_set_sh_reg(cb, index, values); }),
            {packet3(op_set_sh_reg, 2), index - 0x2C00, 0x00123456, 0x7F});
  CHECK(index - 0x2C00 == 0x20C);  // PACKET3_SET_SH_REG_START = 0x2C00
}

TEST_CASE("set_uconfig_reg writes GRBM_GFX_INDEX at UCONFIG offset 0x200") {
  // gc_11_0_0_offset.h:7170 regGRBM_GFX_INDEX 0x2200, BASE_IDX 1; navi10_ip_offset.h:352
  // GC_BASE__INST0_SEG1 0xA000; nvd.h:336 PACKET3_SET_UCONFIG_REG_START 0xc000.
  constexpr std::uint32_t index = 0xA000 + 0x2200;
  static_assert(reg_index(gfx_version::gfx11, "regGRBM_GFX_INDEX") == index);
  words values{0xE0000000};
  check_pm4(emitted([&](cmd_buffer& cb) { emit_set_uconfig_reg(cb, index, values); }),
            {packet3(op_set_uconfig_reg, 1), 0x200, 0xE0000000});
}

TEST_CASE("set register packets refuse registers outside their window") {
  cmd_buffer cb;
  words one{1}, two{1, 2};
  CHECK_THROWS_WITH_AS(emit_set_sh_reg(cb, 0x3000, one),
                       "pm4: SET_SH_REG cannot write registers 0x3000..0x3000: its window is [0x2c00, 0x3000)",
                       tg::usage_error);
  CHECK_THROWS_AS(emit_set_sh_reg(cb, 0x2FFF, two), tg::usage_error);
  CHECK_THROWS_AS(emit_set_uconfig_reg(cb, 0x2E0C, one), tg::usage_error);
  CHECK_THROWS_WITH_AS(emit_set_sh_reg(cb, 0x2E0C, {}), "pm4: SET_SH_REG with no values", tg::usage_error);
  CHECK(cb.empty());
}

TEST_CASE("wait_reg_mem encodes the memory, register and write-then-wait forms") {
  // DW1: FUNCTION bits from 0 (nvd.h:117), MEM_SPACE << 4 (:126), OPERATION << 6 (:130),
  // ENGINE << 8 (:134). Functions: 3 ==, 5 >= (nvd.h:118-125).
  SUBCASE("signal wait: memory, >= (AMDComputeQueue.wait: DW1 = 0x15)") {
    check_pm4(emitted([](cmd_buffer& cb) {
                emit_wait_mem(cb, gpu_va{0x0000'1234'5678'9AB0}, compare::greater_equal, 7);
              }),
              {packet3(op_wait_reg_mem, 5), 5u << 0 | 1u << 4, 0x56789AB0, 0x1234, 7, 0xFFFFFFFF, 4});
  }
  SUBCASE("register poll") {
    check_pm4(emitted([](cmd_buffer& cb) { emit_wait_reg(cb, 0x320B, compare::equal, 0, 1, 0x20); }),
              {packet3(op_wait_reg_mem, 5), 3u << 0, 0x320B, 0, 0, 1, 0x20});
  }
  SUBCASE("HDP flush as gfx_v11_0_ring_emit_hdp_flush (gfx_v11_0.c:5642, :485-505)") {
    // wait_reg_mem(eng 0, mem_space 0, opt 1, req, done, ref_and_mask, ref_and_mask, 0x20), FUNCTION(3).
    check_pm4(emitted([](cmd_buffer& cb) { emit_write_wait_reg(cb, 0xE26, 0xE27, compare::equal, 4, 4, 0x20); }),
              {packet3(op_wait_reg_mem, 5), 1u << 6 | 3u << 0, 0xE26, 0xE27, 4, 4, 0x20});
  }
  SUBCASE("HDP flush as the reference (AMDComputeQueue.memory_barrier: DW1 = 0x45)") {
    words w = emitted([](cmd_buffer& cb) {
      emit_write_wait_reg(cb, 0xE26, 0xE27, compare::greater_equal, 0xFFFFFFFF, 0xFFFFFFFF, 4);
    });
    CHECK(w[1] == 0x45u);
  }
  SUBCASE("a misaligned address is refused") {
    cmd_buffer cb;
    CHECK_THROWS_WITH_AS(emit_wait_mem(cb, gpu_va{0x1002}, compare::equal, 0),
                         "pm4: WAIT_REG_MEM address 0x1002 is not 4-byte aligned", tg::usage_error);
  }
  CHECK(wait_reg_mem_dwords == 7);
}

TEST_CASE("acquire_mem matches gfx_v11_0_emit_mem_sync and gfx_v12_0_emit_mem_sync") {
  // gfx_v11_0.c:6563-6584 and gfx_v12_0.c:5007-5028 write the same 8 dwords: PACKET3(ACQUIRE_MEM, 6),
  // 0, 0xffffffff, 0xffffff, 0, 0, 0x0A, gcr_cntl with GL2_INV (bit 14, nvd.h:298), GL2_WB (15, :299),
  // GLM_INV (5, :284), GLM_WB (4, :283), GL1_INV (9, :288), GLV_INV (8, :287), GLK_INV (7, :286),
  // GLI_INV(1) (bit 0, :269).
  constexpr std::uint32_t linux_gcr = 1u << 14 | 1u << 15 | 1u << 5 | 1u << 4 | 1u << 9 | 1u << 8 | 1u << 7 | 1u << 0;
  check_pm4(emitted([&](cmd_buffer& cb) { emit_acquire_mem(cb, linux_gcr); }),
            {packet3(op_acquire_mem, 6), 0, 0xFFFFFFFF, 0x00FFFFFF, 0, 0, 0x0A, linux_gcr});
  SUBCASE("the reference's barriers (AMDComputeQueue.acquire_mem)") {
    // full: GLI_INV(1), GLM_WB, GLM_INV, GLK_WB (bit 6, nvd.h:285), GLK_INV, GLV_INV, GL1_INV, GL2_INV, GL2_WB
    CHECK(gcr_full_invalidate == (1u << 0 | 1u << 4 | 1u << 5 | 1u << 6 | 1u << 7 | 1u << 8 | 1u << 9 | 1u << 14 | 1u << 15));
    CHECK(gcr_before_dispatch == (1u << 4 | 1u << 5 | 1u << 6 | 1u << 7 | 1u << 8 | 1u << 9));
  }
  SUBCASE("GCR_CNTL is 19 bits (nvd.h:267)") {
    cmd_buffer cb;
    CHECK_THROWS_WITH_AS(emit_acquire_mem(cb, 1u << 19), "pm4: ACQUIRE_MEM GCR_CNTL 0x80000 has bits above 18",
                         tg::usage_error);
  }
}

TEST_CASE("release_mem writes signals, timestamps and drains") {
  // DW1: EVENT_TYPE from bit 0 (nvd.h:166), EVENT_INDEX << 8 (:167), GCR bits 12..22 (:168-177),
  // CACHE_POLICY << 25 (:178). DW2: DATA_SEL << 29 (:186), INT_SEL << 24 (:193), DST_SEL << 16 (:198).
  // CACHE_FLUSH_AND_INV_TS_EVENT = 0x14 (navi10_enum.h:14176, soc24_enum.h:12857).
  constexpr gpu_va signal{0x0000'7FFF'0000'1000};
  SUBCASE("the kernel's fence (gfx_v11_0_ring_emit_fence, gfx_v11_0.c:5725-5760)") {
    // GCR_SEQ | GL2_WB | GLM_INV | GLM_WB | CACHE_POLICY(3) | EVENT_TYPE(0x14) | EVENT_INDEX(5);
    // DATA_SEL(1) (32-bit), INT_SEL(0).
    words w = emitted([&](cmd_buffer& cb) {
      emit_release_mem(cb, {.gcr = PACKET3_RELEASE_MEM_GCR_SEQ | PACKET3_RELEASE_MEM_GCR_GL2_WB |
                                   PACKET3_RELEASE_MEM_GCR_GLM_INV | PACKET3_RELEASE_MEM_GCR_GLM_WB,
                            .cache_policy = 3, .address = signal, .value = 42});
    });
    check_pm4(w, {packet3(op_release_mem, 6), 1u << 22 | 1u << 21 | 1u << 13 | 1u << 12 | 3u << 25 | 0x14u | 5u << 8,
                  1u << 29, 0x1000, 0x7FFF, 42, 0, 0});
  }
  SUBCASE("the reference's signal with cache flush (AMDComputeQueue.signal: 0x0070F514, 0x20000000)") {
    words w = emitted([&](cmd_buffer& cb) {
      emit_release_mem(cb, {.gcr = release_gcr_flush, .address = signal, .value = 9});
    });
    check_pm4(w, {packet3(op_release_mem, 6), 0x0070F514, 0x20000000, 0x1000, 0x7FFF, 9, 0, 0});
  }
  SUBCASE("a timestamp is the 64-bit GPU clock at an 8-byte aligned address") {
    words w = emitted([&](cmd_buffer& cb) { emit_release_mem(cb, {.data = data_sel::gpu_clock, .address = signal + 8}); });
    check_pm4(w, {packet3(op_release_mem, 6), 0x14u | 5u << 8, 3u << 29, 0x1008, 0x7FFF, 0, 0, 0});
    cmd_buffer cb;
    CHECK_THROWS_WITH_AS(emit_release_mem(cb, {.data = data_sel::gpu_clock, .address = signal + 4}),
                         "pm4: RELEASE_MEM address 0x7fff00001004 is not 8-byte aligned", tg::usage_error);
  }
  SUBCASE("a drain writes nothing and interrupts after the write confirm (AMDComputeQueue.timestamp: 0x02000000)") {
    words w = emitted([](cmd_buffer& cb) {
      emit_release_mem(cb, {.data = data_sel::none, .interrupt = int_sel::interrupt_after_write});
    });
    check_pm4(w, {packet3(op_release_mem, 6), 0x514, 2u << 24, 0, 0, 0, 0, 0});
  }
  SUBCASE("bad arguments are refused") {
    cmd_buffer cb;
    CHECK_THROWS_WITH_AS(emit_release_mem(cb, {.address = signal, .value = 1ull << 32}),
                         "pm4: RELEASE_MEM value 0x100000000 does not fit data_sel::value32", tg::usage_error);
    CHECK_THROWS_AS(emit_release_mem(cb, {.gcr = 1u, .address = signal}), tg::usage_error);
    CHECK_THROWS_AS(emit_release_mem(cb, {.event_type = 0x40, .address = signal}), tg::usage_error);
    CHECK(cb.empty());
  }
}

TEST_CASE("dispatch_direct carries the workgroup counts and the initiator") {
  // COMPUTE_DISPATCH_INITIATOR: COMPUTE_SHADER_EN bit 0, FORCE_START_AT_000 bit 2, CS_W32_EN bit 15
  // (gc_11_0_0_sh_mask.h:14570, :14572, :14582; gc_12_0_0_sh_mask.h:7351, :7353, :7363).
  for (gfx_version gfx : {gfx_version::gfx11, gfx_version::gfx12}) {
    CHECK(dispatch_initiator(gfx, true) == (1u << 0 | 1u << 2 | 1u << 15));
    CHECK(dispatch_initiator(gfx, false) == (1u << 0 | 1u << 2));
  }
  check_pm4(emitted([](cmd_buffer& cb) { emit_dispatch_direct(cb, {4, 2, 1}, 0x8005); }),
            {packet3(op_dispatch_direct, 3), 4, 2, 1, 0x8005});
}

TEST_CASE("event_write sends CS_PARTIAL_FLUSH with index 4") {
  // EVENT_TYPE from bit 0, EVENT_INDEX << 8 (nvd.h:155-156); CS_PARTIAL_FLUSH = 7 (navi10_enum.h:14163).
  check_pm4(emitted([](cmd_buffer& cb) { emit_event_write(cb, CS_PARTIAL_FLUSH, 4); }),
            {packet3(op_event_write, 0), 7u | 4u << 8});
  cmd_buffer cb;
  CHECK_THROWS_AS(emit_event_write(cb, 7, 16), tg::usage_error);
}

TEST_CASE("indirect_buffer matches gfx_v11_0_ring_emit_ib_compute for VMID 0") {
  // gfx_v11_0.c:5686-5722: PACKET3(INDIRECT_BUFFER, 2), address lo, hi, INDIRECT_BUFFER_VALID
  // (1 << 23, nvd.h:139) | length_dw | vmid << 24.
  check_pm4(emitted([](cmd_buffer& cb) { emit_indirect_buffer(cb, gpu_va{0x1'2345'6780}, 300); }),
            {packet3(op_indirect_buffer, 2), 0x23456780, 0x1, 300u | 1u << 23});
  cmd_buffer cb;
  CHECK_THROWS_WITH_AS(emit_indirect_buffer(cb, gpu_va{0x1000}, 0x100000),
                       "pm4: INDIRECT_BUFFER of 1048576 dwords; the size field holds 1..1048575 (split the "
                       "commands into several IBs)",
                       tg::usage_error);
  CHECK_THROWS_AS(emit_indirect_buffer(cb, gpu_va{0x1001}, 4), tg::usage_error);
}

namespace {

constexpr kernel_summary test_kernel{.entry = gpu_va{0x0000'0012'3456'7800},
                                     .group_segment_bytes = 1000,  // 2 granules of 512 bytes
                                     .kernarg_bytes = 24,
                                     .rsrc1 = 0x60AF0081,
                                     .rsrc2 = 0x00000098,
                                     .rsrc3 = 0x00000000,
                                     .code_properties = kcp_kernarg_segment_ptr | kcp_wavefront_size32};

constexpr dispatch_args test_args(gfx_version gfx) {
  return {.gfx = gfx,
          .workgroups = {64, 2, 1},
          .workgroup_size = {256, 1, 1},
          .kernargs = gpu_va{0x0000'7F00'0000'0040},
          .scratch = gpu_va{0x0000'00AB'CDEF'0000},
          .tmpring_size = 0x00020200,
          .waves_per_sh = 0};
}

// SET_SH_REG packet with `n` values at SH offset `offset` (register index - 0x2C00).
words sh(std::uint32_t offset, words values) {
  words w{packet3(op_set_sh_reg, std::uint32_t(values.size())), offset};
  w.insert(w.end(), values.begin(), values.end());
  return w;
}

words concat(std::initializer_list<words> parts) {
  words all;
  for (const words& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

// The sequence of tinygrad's AMDComputeQueue.exec for test_kernel, written out packet by packet.
words expected_dispatch(gfx_version gfx, words user_data) {
  // gfx11 sets COMPUTE_PGM_RSRC1.PRIV (bit 20, gc_11_0_0_sh_mask.h:14662) (as tinygrad's AMDProgram, for CWSR).
  std::uint32_t rsrc1 = gfx == gfx_version::gfx11 ? 0x60AF0081u | 1u << 20 : 0x60AF0081u;
  // LDS_SIZE is RSRC2 bits 23:15 (gc_11_0_0_sh_mask.h:14692, gc_12_0_0_sh_mask.h:7485).
  std::uint32_t rsrc2 = 0x98u | 2u << 15;
  return concat({
      {packet3(op_acquire_mem, 6), 0, 0xFFFFFFFF, 0x00FFFFFF, 0, 0, 0x0A, 0x03F0},  // 5
      sh(0x20C, {0x12345678, 0x00}),           // 6: entry >> 8, entry >> 40
      sh(0x212, {rsrc1, rsrc2}),               // 7
      sh(0x228, {0}),                          // 8
      sh(0x218, {0x00020200}),                 // 9
      sh(0x210, {0xABCDEF00, 0x00}),           // 10: scratch >> 8, scratch >> 40
      sh(0x21B, {0, 0, 0}),                    // 11
      sh(0x240, user_data),                    // 12
      sh(0x215, {0}),                          // 13
      sh(0x204, {0, 0, 0, 256, 1, 1, 0, 0}),   // 14
      {packet3(op_dispatch_direct, 3), 64, 2, 1, 0x8005},  // 15
      {packet3(op_event_write, 0), 0x407},                  // 16
  });
}

}  // namespace

TEST_CASE("the dispatch sequence follows tinygrad's AMDComputeQueue.exec") {
  for (gfx_version gfx : {gfx_version::gfx11, gfx_version::gfx12}) {
    CAPTURE(int(gfx));
    words w = emitted([&](cmd_buffer& cb) { emit_dispatch(cb, test_kernel, test_args(gfx)); });
    check_pm4(w, expected_dispatch(gfx, {0x00000040, 0x00007F00}), gfx);
    CHECK(w.size() == dispatch_dwords(2));
    CHECK(w.size() == 55);
  }
}

TEST_CASE("the dispatch passes the scratch V# and dispatch pointer when the kernel asks") {
  kernel_summary k = test_kernel;
  k.code_properties |= kcp_private_segment_buffer | kcp_dispatch_ptr;
  words w = emitted([&](cmd_buffer& cb) { emit_dispatch(cb, k, test_args(gfx_version::gfx11)); });
  // AMDComputeQueue.exec's V# {base lo, base hi | 1 << 31, 0xFFFFFFFF, 0x20C14000}, then the
  // dispatch packet at kernargs + kernarg_size, then the kernarg pointer.
  check_pm4(w, expected_dispatch(gfx_version::gfx11, {0xCDEF0000, 0x000000AB | 1u << 31, 0xFFFFFFFF, 0x20C14000,
                                                      0x00000058, 0x00007F00, 0x00000040, 0x00007F00}));
  CHECK(w.size() == 61);
}

TEST_CASE("the dispatch refuses what the hardware or tg cannot do") {
  cmd_buffer cb;
  SUBCASE("user SGPRs tg does not provide") {
    kernel_summary k = test_kernel;
    k.code_properties |= kcp_queue_ptr;
    CHECK_THROWS_WITH_AS(emit_dispatch(cb, k, test_args(gfx_version::gfx11)),
                         "pm4: the kernel asks for the queue pointer user SGPR (kernel_code_properties 0x40c), "
                         "which tg does not provide; compile without it",
                         tg::usage_error);
  }
  SUBCASE("more LDS than the device has (AMDProgram's group_segment_size check)") {
    kernel_summary k = test_kernel;
    k.group_segment_bytes = 64 * 1024 + 1;
    CHECK_THROWS_WITH_AS(emit_dispatch(cb, k, test_args(gfx_version::gfx12)),
                         "pm4: too many resources requested: group_segment_size 65537 bytes of LDS, the device has 65536",
                         tg::usage_error);
  }
  SUBCASE("an entry point that is not 256-byte aligned") {
    kernel_summary k = test_kernel;
    k.entry = gpu_va{0x1080};
    CHECK_THROWS_WITH_AS(emit_dispatch(cb, k, test_args(gfx_version::gfx11)),
                         "pm4: kernel entry 0x1080 is not 256-byte aligned", tg::usage_error);
  }
  SUBCASE("a workgroup wider than NUM_THREAD_FULL: 16 bits on gfx11, 13 on gfx12") {
    // gc_11_0_0_sh_mask.h:14621 mask 0xFFFF; gc_12_0_0_sh_mask.h:7407 mask 0x1FFF.
    dispatch_args a = test_args(gfx_version::gfx12);
    a.workgroup_size = {8192, 1, 1};
    CHECK_THROWS_WITH_AS(emit_dispatch(cb, test_kernel, a),
                         "pm4: workgroup size 8192 in x is outside 1..8191 (regCOMPUTE_NUM_THREAD_X.NUM_THREAD_FULL "
                         "on gc_12_0_0)",
                         tg::usage_error);
    a.gfx = gfx_version::gfx11;
    CHECK_NOTHROW(emit_dispatch(cb, test_kernel, a));
  }
  SUBCASE("an entry above the 48 bits COMPUTE_PGM_LO/HI hold (PGM_HI.DATA is 8 bits, gc_11_0_0_sh_mask.h:14644)") {
    kernel_summary k = test_kernel;
    k.entry = gpu_va{1ull << 48};
    CHECK_THROWS_WITH_AS(emit_dispatch(cb, k, test_args(gfx_version::gfx11)),
                         "pm4: kernel entry 0x1000000000000 is above what regCOMPUTE_PGM_HI can hold (48-bit addresses)",
                         tg::usage_error);
  }
}
