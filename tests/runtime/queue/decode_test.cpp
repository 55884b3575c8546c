// decode_test.cpp: PM4 and SDMA streams decode to readable lines, and bad streams stop cleanly.
#include <doctest/doctest.h>

#include <string>

#include "runtime/queue/decode.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg::queue;
using pm4::gfx_version;

namespace {

std::string pm4_text(auto emit, gfx_version gfx = gfx_version::gfx11) {
  cmd_buffer cb;
  emit(cb);
  return decode_pm4(cb, gfx);
}

std::string sdma_text(auto emit) {
  cmd_buffer cb;
  emit(cb);
  return decode_sdma(cb);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("pm4 packets decode to one line each with opcode and event names") {
  CHECK(pm4_text([](cmd_buffer& cb) { pm4::emit_event_write(cb, pm4::CS_PARTIAL_FLUSH, 4); }) ==
        "[0000] EVENT_WRITE event=CS_PARTIAL_FLUSH(0x07) index=4\n");
  CHECK(pm4_text([](cmd_buffer& cb) { pm4::emit_wait_mem(cb, gpu_va{0x1000}, compare::greater_equal, 5); }) ==
        "[0000] WAIT_REG_MEM mem 0x1000 & 0xffffffff >= 0x5 poll=4\n");
  CHECK(pm4_text([](cmd_buffer& cb) { pm4::emit_acquire_mem(cb, pm4::gcr_before_dispatch); }) ==
        "[0000] ACQUIRE_MEM gcr_cntl=0x03f0{GLM_WB|GLM_INV|GLK_WB|GLK_INV|GLV_INV|GL1_INV} coher_cntl=0x0 "
        "size=0xffffffffffffff base=0x0 poll=10\n");
  CHECK(pm4_text([](cmd_buffer& cb) {
          pm4::emit_release_mem(cb, {.gcr = pm4::release_gcr_flush, .address = gpu_va{0x1000}, .value = 9});
        }) == "[0000] RELEASE_MEM event=CACHE_FLUSH_AND_INV_TS_EVENT(0x14) index=5 "
              "gcr={GLM_WB|GLM_INV|GLV_INV|GL1_INV|GL2_INV|GL2_WB|SEQ} cache_policy=0 data_sel=1 int_sel=0 "
              "dst_sel=0 addr=0x1000 data=0x9 ctx=0\n");
  CHECK(pm4_text([](cmd_buffer& cb) { pm4::emit_indirect_buffer(cb, gpu_va{0x2000}, 16); }) ==
        "[0000] INDIRECT_BUFFER addr=0x2000 size=16 dwords valid=1 vmid=0\n");
  CHECK(pm4_text([](cmd_buffer& cb) {
          pm4::emit_nop(cb, 1);
          pm4::emit_nop(cb, 3);
        }) == "[0000] NOP (1 dword)\n[0001] NOP (3 dwords)\n");
}

TEST_CASE("set_sh_reg decodes every register with the fields of its gfx version") {
  std::uint32_t index = pm4::reg_index(gfx_version::gfx12, "regCOMPUTE_NUM_THREAD_X");
  std::uint32_t values[] = {256};
  auto emit = [&](cmd_buffer& cb) { pm4::emit_set_sh_reg(cb, index, values); };
  CHECK(pm4_text(emit, gfx_version::gfx11) ==
        "[0000] SET_SH_REG offset=0x207 (1 register)\n"
        "         regCOMPUTE_NUM_THREAD_X = 0x00000100 {NUM_THREAD_FULL=0x100, NUM_THREAD_PARTIAL=0}\n");
  // gfx12 has INTERLEAVE_BITS_X in bits 15:13 (gc_12_0_0_sh_mask.h).
  CHECK(pm4_text(emit, gfx_version::gfx12) ==
        "[0000] SET_SH_REG offset=0x207 (1 register)\n"
        "         regCOMPUTE_NUM_THREAD_X = 0x00000100 {NUM_THREAD_FULL=0x100, INTERLEAVE_BITS_X=0, "
        "NUM_THREAD_PARTIAL=0}\n");
}

TEST_CASE("a whole dispatch decodes packet by packet") {
  pm4::kernel_summary k{.entry = gpu_va{0x12'3456'7800}, .group_segment_bytes = 0, .kernarg_bytes = 8,
                        .rsrc1 = 0, .rsrc2 = 0, .rsrc3 = 0,
                        .code_properties = pm4::kcp_kernarg_segment_ptr | pm4::kcp_wavefront_size32};
  pm4::dispatch_args a{.gfx = gfx_version::gfx11, .workgroups = {4, 2, 1}, .workgroup_size = {64, 1, 1},
                       .kernargs = gpu_va{0x8000}, .scratch = gpu_va{0x100000}};
  std::string text = pm4_text([&](cmd_buffer& cb) { pm4::emit_dispatch(cb, k, a); });
  CHECK(contains(text, "regCOMPUTE_PGM_LO = 0x12345678"));
  CHECK(contains(text, "PRIV=1"));  // gfx11's RSRC1.PRIV
  CHECK(contains(text, "regCOMPUTE_USER_DATA_0 = 0x00008000"));
  CHECK(contains(text, "[0030] DISPATCH_DIRECT 4x2x1 workgroups, regCOMPUTE_DISPATCH_INITIATOR = 0x00008005 "
                       "{COMPUTE_SHADER_EN=1, PARTIAL_TG_EN=0, FORCE_START_AT_000=1,"));
  CHECK(contains(text, "[0035] EVENT_WRITE event=CS_PARTIAL_FLUSH(0x07) index=4\n"));
}

TEST_CASE("pm4 decoding names unknown registers and opcodes and stops at bad data") {
  SUBCASE("a register outside the table shows its index") {
    std::uint32_t values[] = {7};
    CHECK(contains(pm4_text([&](cmd_buffer& cb) { pm4::emit_set_uconfig_reg(cb, 0xC300, values); }),
                   "reg 0xc300 = 0x00000007"));
    CHECK(contains(pm4_text([](cmd_buffer& cb) { pm4::emit_write_wait_reg(cb, 0xE26, 0xE27, compare::equal, 4, 4); }),
                   "WAIT_REG_MEM write 0x4 to reg 0xe26, then wait reg 0xe27 & 0x4 == 0x4 poll=4"));
  }
  SUBCASE("an opcode without a decoder shows its nvd.h name and payload") {
    std::uint32_t words[] = {0xC0014000, 1, 2};  // PACKET3(PACKET3_COPY_DATA = 0x40, 1)
    CHECK(decode_pm4(words, gfx_version::gfx11) == "[0000] COPY_DATA (2 payload dwords): 0x00000001 0x00000002\n");
  }
  SUBCASE("a truncated packet") {
    std::uint32_t words[] = {0xC0064900, 0};
    CHECK(decode_pm4(words, gfx_version::gfx11) == "[0000] RELEASE_MEM: truncated, needs 8 dwords, 2 left\n");
  }
  SUBCASE("a dword that is not a type-3 header") {
    std::uint32_t words[] = {0xFFFF1000, 0x12345678, 0xFFFF1000};
    CHECK(decode_pm4(words, gfx_version::gfx11) ==
          "[0000] NOP (1 dword)\n[0001] not a type-3 header: 0x12345678 (type 0); stopping\n");
  }
}

TEST_CASE("sdma packets decode with their header field names") {
  CHECK(sdma_text([](cmd_buffer& cb) { sdma::emit_copy_linear(cb, gpu_va{0x1'0000'0000}, gpu_va{0x2000}, 4096); }) ==
        "[0000] COPY_LINEAR count=4095 dst_sw=0x0 dst_cache_policy=0x0 src_sw=0x0 src_cache_policy=0x0 "
        "src_addr=0x2000 dst_addr=0x100000000\n");
  CHECK(sdma_text([](cmd_buffer& cb) { sdma::emit_fence(cb, gpu_va{0x1000}, 7); }) ==
        "[0000] FENCE mtype=0x3 addr=0x1000 data=0x7\n");
  CHECK(sdma_text([](cmd_buffer& cb) { sdma::emit_timestamp(cb, gpu_va{0x1008}); }) ==
        "[0000] TIMESTAMP_GET_GLOBAL write_addr=0x1008\n");
  CHECK(sdma_text([](cmd_buffer& cb) { sdma::emit_poll_regmem(cb, gpu_va{0x1000}, compare::greater_equal, 7); }) ==
        "[0000] POLL_REGMEM func=0x5 mem_poll=0x1 addr=0x1000 value=0x7 mask=0xffffffff interval=4 "
        "retry_count=0xfff\n");
  CHECK(sdma_text([](cmd_buffer& cb) {
          std::uint32_t data[] = {1, 2};
          sdma::emit_write(cb, gpu_va{0x40}, data);
          sdma::emit_trap(cb, 3);
          sdma::emit_nop(cb, 2);
          sdma::emit_const_fill(cb, gpu_va{0x4000}, 0xAB, 64);
        }) == "[0000] WRITE_UNTILED dst_addr=0x40 count=1 sw=0x0 cache_policy=0x0 data: 0x00000001 0x00000002\n"
              "[0006] TRAP int_context=0x3\n"
              "[0008] NOP x2\n"
              "[000a] CONSTANT_FILL dst_addr=0x4000 src_data_31_0=0xab count=63\n");
}

TEST_CASE("sdma decoding stops at unknown or truncated packets") {
  SUBCASE("unknown op") {
    std::uint32_t words[] = {0, 0x000000FF, 1};
    CHECK(decode_sdma(words) == "[0000] NOP x1\n[0001] unknown SDMA op 255 sub_op 0 (0x000000ff); stopping\n");
  }
  SUBCASE("truncated") {
    std::uint32_t words[] = {0x00000001, 0};
    CHECK(decode_sdma(words) == "[0000] COPY_LINEAR: truncated, needs 7 dwords, 2 left\n");
  }
  SUBCASE("a burst NOP with a count skips its payload") {
    std::uint32_t words[] = {0x00020000, 0, 0, 0x00000006, 0};  // NOP count 2 (pkt_open.h:5245-5247), TRAP
    CHECK(decode_sdma(words) == "[0000] NOP count=2 skips 0x00000000 0x00000000\n[0003] TRAP int_context=0x0\n");
  }
}
