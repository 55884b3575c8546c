// pm4.hpp: PM4 type-3 packets for gfx11/gfx12 compute queues, and the kernel dispatch sequence.
//
// One emitter per packet, each with its size in dwords (header included) as a named constant.
// Opcodes, field shifts and register layouts come from pm4_gen.hpp (generated from amdgpu/nvd.h and
// the gc_11_0_0 / gc_12_0_0 headers); packet contents follow tinygrad/runtime/ops_amd.py
// (AMDComputeQueue) and the kernel's gfx_v11_0.c / gfx_v12_0.c, cited per emitter. Invalid
// arguments throw tg::usage_error.
//
//   tg::queue::cmd_buffer cb;
//   tg::queue::pm4::emit_wait_mem(cb, signal, tg::queue::pm4::compare::greater_equal, value);
//   tg::queue::pm4::emit_acquire_mem(cb, tg::queue::pm4::gcr_full_invalidate);
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/queue/cmd_buffer.hpp"
#include "runtime/queue/compare.hpp"
#include "runtime/queue/pm4_gen.hpp"

namespace tg::queue::pm4 {

enum class gfx_version : std::uint8_t { gfx11, gfx12 };

// The curated SH/UCONFIG-window GC registers of one version (pm4_gen.hpp).
constexpr const reg_table& queue_regs(gfx_version gfx) {
  return gfx == gfx_version::gfx11 ? gc_11_0_0::table : gc_12_0_0::table;
}

// Absolute dword index of a queue-writable register: GC segment base + offset. Throws for a name
// outside the SH/UCONFIG windows (not in the table).
constexpr std::uint32_t reg_index(gfx_version gfx, std::string_view name) {
  const reg_info& r = queue_regs(gfx).reg(name);
  return gc_bases[r.base_index] + r.offset;
}

// ---- header (nvd.h PACKET3(op, n)): type 3 in bits 31:30, count = payload dwords - 1 in 29:16,
// opcode in 15:8. A packet carries 1..0x4000 payload dwords.
inline constexpr std::size_t max_payload_dwords = 0x4000;

constexpr std::uint32_t type3_header(std::uint8_t opcode, std::size_t payload_dwords) {
  if (payload_dwords == 0 || payload_dwords > max_payload_dwords)
    throw usage_error(str("pm4: a type-3 packet carries 1..", max_payload_dwords, " payload dwords, not ",
                          payload_dwords));
  return 3u << 30 | std::uint32_t(payload_dwords - 1) << 16 | std::uint32_t(opcode) << 8;
}

// A NOP whose count field is 0x3FFF is one dword on its own: the kernel's ring->funcs->nop
// (gfx_v11_0.c: `.nop = PACKET3(PACKET3_NOP, 0x3FFF)`, used alone by gfx_v11_ring_insert_nop).
inline constexpr std::uint32_t nop_single_dword = 3u << 30 | 0x3FFFu << 16 | std::uint32_t(PACKET3_NOP) << 8;

// ---- dword counts, header included
inline constexpr std::size_t wait_reg_mem_dwords = 7;     // gfx_v11_0_wait_reg_mem
inline constexpr std::size_t acquire_mem_dwords = 8;      // gfx_v11_0_emit_mem_sync, gfx10+ form
inline constexpr std::size_t release_mem_dwords = 8;      // gfx_v11_0_ring_emit_fence
inline constexpr std::size_t dispatch_direct_dwords = 5;  // AMDComputeQueue.exec
inline constexpr std::size_t event_write_dwords = 2;      // AMDComputeQueue.exec
inline constexpr std::size_t indirect_buffer_dwords = 4;  // gfx_v11_0_ring_emit_ib_compute
constexpr std::size_t set_reg_dwords(std::size_t values) { return 2 + values; }  // AMDComputeQueue.wreg

// NOP padding of exactly `dwords` (>= 1) dwords; long runs become several NOP packets.
void emit_nop(cmd_buffer& cb, std::size_t dwords);

// SET_SH_REG / SET_UCONFIG_REG: consecutive registers from `first_reg` (absolute dword index, see
// reg_index) get `values`. The register must lie in the packet's window (nvd.h _START/_END).
void emit_set_sh_reg(cmd_buffer& cb, std::uint32_t first_reg, std::span<const std::uint32_t> values);
void emit_set_uconfig_reg(cmd_buffer& cb, std::uint32_t first_reg, std::span<const std::uint32_t> values);

// ---- WAIT_REG_MEM: poll until (value & mask) <compare> reference.
using tg::queue::compare;
inline constexpr std::uint32_t default_poll_interval = 4;  // the reference's value (AMDComputeQueue.wait_reg_mem)

// Wait on the 32-bit word at `addr` (4-byte aligned).
void emit_wait_mem(cmd_buffer& cb, gpu_va addr, compare func, std::uint32_t reference,
                   std::uint32_t mask = 0xFFFFFFFFu, std::uint32_t poll_interval = default_poll_interval);
// Wait on a register (absolute dword index).
void emit_wait_reg(cmd_buffer& cb, std::uint32_t reg, compare func, std::uint32_t reference,
                   std::uint32_t mask = 0xFFFFFFFFu, std::uint32_t poll_interval = default_poll_interval);
// Write `reference` to `write_reg`, then wait on `done_reg` (operation WR_WAIT_WR_REG): the HDP
// flush request/done pair of AMDComputeQueue.memory_barrier (Linux: gfx_v11_0_ring_emit_hdp_flush).
void emit_write_wait_reg(cmd_buffer& cb, std::uint32_t write_reg, std::uint32_t done_reg, compare func,
                         std::uint32_t reference, std::uint32_t mask = 0xFFFFFFFFu,
                         std::uint32_t poll_interval = default_poll_interval);

// ---- ACQUIRE_MEM: make caches coherent for what follows. gfx11 and gfx12 use the same 8-dword
// form in Linux 6.12 (gfx_v11_0_emit_mem_sync, gfx_v12_0_emit_mem_sync); only GCR_CNTL varies.
inline constexpr std::uint32_t gcr_full_invalidate =  // memory barrier (AMDComputeQueue.memory_barrier)
    PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB(1) |
    PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_INV(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_WB(1) |
    PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV(1) |
    PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1) |
    PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB(1);
inline constexpr std::uint32_t gcr_before_dispatch =  // no I$ or L2 invalidate (exec's acquire_mem(gli=0, gl2=0))
    PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_INV(1) |
    PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_WB(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV(1) |
    PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV(1);
static_assert(gcr_full_invalidate == 0xC3F1 && gcr_before_dispatch == 0x03F0, "GCR_CNTL of ops_amd.py acquire_mem");

void emit_acquire_mem(cmd_buffer& cb, std::uint32_t gcr_cntl);

// ---- RELEASE_MEM: at the end of the pipe, write a value / timestamp and optionally interrupt.
enum class data_sel : std::uint8_t {  // nvd.h, comment under PACKET3_RELEASE_MEM_DATA_SEL
  none = 0, value32 = 1, value64 = 2, gpu_clock = 3, sys_clock = 4,
};
enum class int_sel : std::uint8_t {  // nvd.h, comment under PACKET3_RELEASE_MEM_INT_SEL
  none = 0, interrupt = 1, interrupt_after_write = 2,
};
// Write back and invalidate GLM, GLV, GL1, GL2 in order: the reference's signal flush
// (AMDComputeQueue.release_mem with cache_flush).
inline constexpr std::uint32_t release_gcr_flush =
    PACKET3_RELEASE_MEM_GCR_GLM_WB | PACKET3_RELEASE_MEM_GCR_GLM_INV | PACKET3_RELEASE_MEM_GCR_GLV_INV |
    PACKET3_RELEASE_MEM_GCR_GL1_INV | PACKET3_RELEASE_MEM_GCR_GL2_INV | PACKET3_RELEASE_MEM_GCR_GL2_WB |
    PACKET3_RELEASE_MEM_GCR_SEQ;
static_assert(release_gcr_flush == 0x0070F000, "RELEASE_MEM GCR flags of ops_amd.py release_mem");

struct release_mem {
  std::uint8_t event_type = CACHE_FLUSH_AND_INV_TS_EVENT;
  std::uint8_t event_index = 5;  // end of pipe (gfx_v11_0_ring_emit_fence)
  std::uint32_t gcr = 0;         // PACKET3_RELEASE_MEM_GCR_* bits, e.g. release_gcr_flush
  std::uint8_t cache_policy = 0; // PACKET3_RELEASE_MEM_CACHE_POLICY: 0 lru .. 3 bypass
  data_sel data = data_sel::value32;
  int_sel interrupt = int_sel::none;
  gpu_va address{};              // 4-byte aligned; 8-byte for 64-bit data; ignored for data_sel::none
  std::uint64_t value = 0;
  std::uint32_t int_ctx_id = 0;
};
void emit_release_mem(cmd_buffer& cb, const release_mem& r);

// ---- DISPATCH_DIRECT, EVENT_WRITE, INDIRECT_BUFFER
// COMPUTE_DISPATCH_INITIATOR: compute_shader_en | force_start_at_000 | cs_w32_en for wave32 (AMDComputeQueue.exec).
std::uint32_t dispatch_initiator(gfx_version gfx, bool wave32);
void emit_dispatch_direct(cmd_buffer& cb, std::array<std::uint32_t, 3> workgroups, std::uint32_t initiator);
// event_type: a VGT_EVENT_TYPE (6 bits); event_index: 4 bits (nvd.h comment under EVENT_INDEX).
void emit_event_write(cmd_buffer& cb, std::uint8_t event_type, std::uint8_t event_index);
// Run the `size_dwords` dwords at `ib` (4-byte aligned), then come back (gfx_v11_0_ring_emit_ib_compute).
inline constexpr std::uint32_t max_ib_dwords = 0xFFFFF;  // IB_SIZE is bits 19:0 (nvd.h: INDIRECT_BUFFER__IB_SIZE)
void emit_indirect_buffer(cmd_buffer& cb, gpu_va ib, std::uint32_t size_dwords);

// ---- The kernel dispatch sequence (tinygrad/runtime/ops_amd.py: AMDComputeQueue.exec).

// What the dispatch needs from the 64-byte kernel descriptor (llvm/docs/AMDGPUUsage.rst, "Kernel Descriptor").
struct kernel_summary {
  gpu_va entry;                      // code address = descriptor address + entry offset; 256-byte aligned
  std::uint32_t group_segment_bytes; // LDS bytes
  std::uint32_t kernarg_bytes;       // kernarg_size
  std::uint32_t rsrc1, rsrc2, rsrc3; // compute_pgm_rsrc1/2/3
  std::uint16_t code_properties;     // kernel_code_properties
};

// kernel_code_properties bits (llvm/docs/AMDGPUUsage.rst, "Kernel Descriptor"; LLVM AMDHSAKernelDescriptor.h)
inline constexpr std::uint16_t kcp_private_segment_buffer = 1u << 0;
inline constexpr std::uint16_t kcp_dispatch_ptr = 1u << 1;
inline constexpr std::uint16_t kcp_queue_ptr = 1u << 2;
inline constexpr std::uint16_t kcp_kernarg_segment_ptr = 1u << 3;
inline constexpr std::uint16_t kcp_dispatch_id = 1u << 4;
inline constexpr std::uint16_t kcp_flat_scratch_init = 1u << 5;
inline constexpr std::uint16_t kcp_private_segment_size = 1u << 6;
inline constexpr std::uint16_t kcp_wavefront_size32 = 1u << 10;

struct dispatch_args {
  gfx_version gfx;
  std::array<std::uint32_t, 3> workgroups;      // grid size in workgroups
  std::array<std::uint32_t, 3> workgroup_size;  // threads per workgroup
  gpu_va kernargs;                              // 8-byte aligned
  gpu_va scratch;                               // this XCC's scratch base; 256-byte aligned
  std::uint32_t tmpring_size = 0;               // COMPUTE_TMPRING_SIZE, device-wide (_ensure_has_local_memory)
  std::uint32_t waves_per_sh = 0;               // 0 = unlimited (AMDComputeQueue.exec: WAVES_PER_SH)
  std::uint32_t lds_bytes_max = 64 * 1024;      // lds_size_in_kb * 1024 from the GC info (AMDProgram.__init__)
};

// The user SGPR values in ABI order (llvm/docs/AMDGPUUsage.rst, "Initial Kernel Execution State"):
// private segment buffer V#, dispatch pointer, kernarg pointer. Throws for SGPRs the kernel asks
// for that tg does not provide.
std::vector<std::uint32_t> user_sgprs(const kernel_summary& k, const dispatch_args& a);

// Dwords emit_dispatch appends: 53 + number of user SGPRs (the packets of AMDComputeQueue.exec).
constexpr std::size_t dispatch_dwords(std::size_t user_sgpr_count) {
  return acquire_mem_dwords                 // 5  caches
         + set_reg_dwords(2)                // 6  COMPUTE_PGM_LO/HI
         + set_reg_dwords(2)                // 7  COMPUTE_PGM_RSRC1/2
         + set_reg_dwords(1)                // 8  COMPUTE_PGM_RSRC3
         + set_reg_dwords(1)                // 9  COMPUTE_TMPRING_SIZE
         + set_reg_dwords(2)                // 10 COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI
         + set_reg_dwords(3)                // 11 COMPUTE_RESTART_X/Y/Z
         + set_reg_dwords(user_sgpr_count)  // 12 COMPUTE_USER_DATA_0..
         + set_reg_dwords(1)                // 13 COMPUTE_RESOURCE_LIMITS
         + set_reg_dwords(8)                // 14 COMPUTE_START_X .. COMPUTE_PERFCOUNT_ENABLE
         + dispatch_direct_dwords           // 15
         + event_write_dwords;              // 16 CS_PARTIAL_FLUSH
}
static_assert(dispatch_dwords(2) == 55 && dispatch_dwords(8) == 61, "a dispatch is 55 to 61 dwords");

// ACQUIRE_MEM, program/resource/scratch/user-SGPR/size registers, DISPATCH_DIRECT and the
// CS_PARTIAL_FLUSH event. The wait before and the RELEASE_MEM signal after are the caller's.
void emit_dispatch(cmd_buffer& cb, const kernel_summary& k, const dispatch_args& a);

}  // namespace tg::queue::pm4
