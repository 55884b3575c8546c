// pm4.cpp: PM4 packet emitters and the kernel dispatch sequence (see pm4.hpp).
#include "runtime/queue/pm4.hpp"

#include <algorithm>
#include <bit>
#include <utility>

namespace tg::queue::pm4 {
namespace {

// Register indices of the dispatch sequence. They are the same on gfx11 and gfx12 (gc_11_0_0_offset.h,
// gc_12_0_0_offset.h), which the static_asserts below check against both generated tables.
constexpr std::uint32_t index_of(std::string_view name) {
  std::uint32_t i11 = reg_index(gfx_version::gfx11, name);
  if (i11 != reg_index(gfx_version::gfx12, name)) throw usage_error("gfx11 and gfx12 disagree");
  return i11;
}
constexpr std::uint32_t reg_pgm_lo = index_of("regCOMPUTE_PGM_LO");
constexpr std::uint32_t reg_pgm_rsrc1 = index_of("regCOMPUTE_PGM_RSRC1");
constexpr std::uint32_t reg_pgm_rsrc3 = index_of("regCOMPUTE_PGM_RSRC3");
constexpr std::uint32_t reg_tmpring_size = index_of("regCOMPUTE_TMPRING_SIZE");
constexpr std::uint32_t reg_scratch_base_lo = index_of("regCOMPUTE_DISPATCH_SCRATCH_BASE_LO");
constexpr std::uint32_t reg_restart_x = index_of("regCOMPUTE_RESTART_X");
constexpr std::uint32_t reg_user_data_0 = index_of("regCOMPUTE_USER_DATA_0");
constexpr std::uint32_t reg_resource_limits = index_of("regCOMPUTE_RESOURCE_LIMITS");
constexpr std::uint32_t reg_start_x = index_of("regCOMPUTE_START_X");

// Each multi-value SET_SH_REG below writes a run of adjacent registers.
static_assert(index_of("regCOMPUTE_PGM_HI") == reg_pgm_lo + 1);
static_assert(index_of("regCOMPUTE_PGM_RSRC2") == reg_pgm_rsrc1 + 1);
static_assert(index_of("regCOMPUTE_DISPATCH_SCRATCH_BASE_HI") == reg_scratch_base_lo + 1);
static_assert(index_of("regCOMPUTE_RESTART_Z") == reg_restart_x + 2);
static_assert(index_of("regCOMPUTE_USER_DATA_15") == reg_user_data_0 + 15);
static_assert(index_of("regCOMPUTE_NUM_THREAD_X") == reg_start_x + 3);
static_assert(index_of("regCOMPUTE_PERFCOUNT_ENABLE") == reg_start_x + 7);
// The SET_SH_REG offsets of the registers tinygrad/runtime/ops_amd.py: AMDComputeQueue.exec writes.
static_assert(reg_pgm_lo - PACKET3_SET_SH_REG_START == 0x20C && reg_pgm_rsrc1 - PACKET3_SET_SH_REG_START == 0x212);
static_assert(reg_pgm_rsrc3 - PACKET3_SET_SH_REG_START == 0x228 && reg_tmpring_size - PACKET3_SET_SH_REG_START == 0x218);
static_assert(reg_scratch_base_lo - PACKET3_SET_SH_REG_START == 0x210 && reg_restart_x - PACKET3_SET_SH_REG_START == 0x21B);
static_assert(reg_user_data_0 - PACKET3_SET_SH_REG_START == 0x240 && reg_resource_limits - PACKET3_SET_SH_REG_START == 0x215);
static_assert(reg_start_x - PACKET3_SET_SH_REG_START == 0x204);

constexpr std::size_t max_nop_dwords = max_payload_dwords;  // header + 0x3FFF payload (count 0x3FFE)

// ACQUIRE_MEM coherence range and poll interval as Linux writes them (gfx_v11_0_emit_mem_sync,
// gfx_v12_0_emit_mem_sync): the whole address space, poll 0x0A. (The reference writes
// 0xFFFFFFFF / 0; COHER_SIZE_HI is 8 bits wide per nvd.h, so both mean "all".)
constexpr std::uint32_t coher_size_all = 0xFFFFFFFFu;
constexpr std::uint32_t coher_size_hi_all = 0x00FFFFFFu;
constexpr std::uint32_t acquire_poll_interval = 0x0A;
constexpr std::uint32_t gcr_cntl_mask = (1u << 19) - 1;  // GCR_CNTL [18:0] (nvd.h ACQUIRE_MEM comment)

constexpr std::uint32_t release_gcr_mask =
    PACKET3_RELEASE_MEM_GCR_GLM_WB | PACKET3_RELEASE_MEM_GCR_GLM_INV | PACKET3_RELEASE_MEM_GCR_GLV_INV |
    PACKET3_RELEASE_MEM_GCR_GL1_INV | PACKET3_RELEASE_MEM_GCR_GL2_US | PACKET3_RELEASE_MEM_GCR_GL2_RANGE |
    PACKET3_RELEASE_MEM_GCR_GL2_DISCARD | PACKET3_RELEASE_MEM_GCR_GL2_INV | PACKET3_RELEASE_MEM_GCR_GL2_WB |
    PACKET3_RELEASE_MEM_GCR_SEQ;

// Scratch buffer resource (V#) words 2 and 3 and the swizzle bit of word 1 (tinygrad/runtime/ops_amd.py:
// AMDComputeQueue.exec).
constexpr std::uint32_t scratch_vsharp_num_records = 0xFFFFFFFFu;
constexpr std::uint32_t scratch_vsharp_word3 = 0x20C14000u;
constexpr std::uint32_t scratch_vsharp_swizzle = 1u << 31;

constexpr std::uint32_t lds_granule_bytes = 512;  // tinygrad/runtime/ops_amd.py: AMDProgram.__init__

void require_aligned(gpu_va va, std::uint64_t bytes, const char* what) {
  if (!va.is_aligned(bytes))
    throw usage_error(str("pm4: ", what, " ", va, " is not ", bytes, "-byte aligned"));
}

void emit_set_reg(cmd_buffer& cb, std::uint8_t opcode, std::uint32_t start, std::uint32_t end, const char* packet,
                  std::uint32_t first_reg, std::span<const std::uint32_t> values) {
  if (values.empty()) throw usage_error(str("pm4: ", packet, " with no values"));
  if (first_reg < start || first_reg + values.size() > end)
    throw usage_error(str("pm4: ", packet, " cannot write registers ", hex{first_reg}, "..",
                          hex{first_reg + values.size() - 1}, ": its window is [", hex{start}, ", ", hex{end}, ")"));
  cb.push_back(type3_header(opcode, 1 + values.size()));
  cb.push_back(first_reg - start);
  cb.insert(cb.end(), values.begin(), values.end());
}

void emit_sh(cmd_buffer& cb, std::uint32_t first_reg, std::initializer_list<std::uint32_t> values) {
  emit_set_sh_reg(cb, first_reg, std::span<const std::uint32_t>(values.begin(), values.size()));
}

void emit_wait_reg_mem(cmd_buffer& cb, std::uint32_t mem_space, std::uint32_t operation, compare func,
                       std::uint32_t addr0, std::uint32_t addr1, std::uint32_t reference, std::uint32_t mask,
                       std::uint32_t poll_interval) {
  if (!is_valid(func))
    throw usage_error(str("pm4: WAIT_REG_MEM compare function ", unsigned(func), " is not 0..6"));
  cb.push_back(type3_header(PACKET3_WAIT_REG_MEM, wait_reg_mem_dwords - 1));
  // ENGINE 0 = ME: the only engine of a compute (MEC) queue.
  cb.push_back(WAIT_REG_MEM_FUNCTION(std::uint32_t(func)) | WAIT_REG_MEM_MEM_SPACE(mem_space) |
               WAIT_REG_MEM_OPERATION(operation) | WAIT_REG_MEM_ENGINE(0));
  cb.insert(cb.end(), {addr0, addr1, reference, mask, poll_interval});
}

const reg_field& queue_field(gfx_version gfx, std::string_view reg, std::string_view field) {
  const reg_table& t = queue_regs(gfx);
  return t.field(t.reg(reg), field);
}

// Address bits 47:40 for a *_HI register whose DATA field holds them (COMPUTE_PGM_HI, ..._SCRATCH_BASE_HI).
std::uint32_t high_bits(gfx_version gfx, std::string_view reg, gpu_va va, const char* what) {
  const reg_field& data = queue_field(gfx, reg, "DATA");
  std::uint64_t hi = va.value >> 40;
  if (hi > data.max_value())
    throw usage_error(str("pm4: ", what, " ", va, " is above what ", reg, " can hold (",
                          40 + std::popcount(data.max_value()), "-bit addresses)"));
  return data.set(0, std::uint32_t(hi));
}

}  // namespace

void emit_nop(cmd_buffer& cb, std::size_t dwords) {
  while (dwords > 0) {
    if (dwords == 1) {
      cb.push_back(nop_single_dword);
      return;
    }
    std::size_t n = std::min(dwords, max_nop_dwords);
    cb.push_back(type3_header(PACKET3_NOP, n - 1));
    cb.insert(cb.end(), n - 1, 0u);
    dwords -= n;
  }
}

void emit_set_sh_reg(cmd_buffer& cb, std::uint32_t first_reg, std::span<const std::uint32_t> values) {
  emit_set_reg(cb, PACKET3_SET_SH_REG, PACKET3_SET_SH_REG_START, PACKET3_SET_SH_REG_END, "SET_SH_REG", first_reg,
               values);
}

void emit_set_uconfig_reg(cmd_buffer& cb, std::uint32_t first_reg, std::span<const std::uint32_t> values) {
  emit_set_reg(cb, PACKET3_SET_UCONFIG_REG, PACKET3_SET_UCONFIG_REG_START, PACKET3_SET_UCONFIG_REG_END,
               "SET_UCONFIG_REG", first_reg, values);
}

void emit_wait_mem(cmd_buffer& cb, gpu_va addr, compare func, std::uint32_t reference, std::uint32_t mask,
                   std::uint32_t poll_interval) {
  require_aligned(addr, 4, "WAIT_REG_MEM address");
  emit_wait_reg_mem(cb, 1, 0, func, addr.lo(), addr.hi(), reference, mask, poll_interval);
}

void emit_wait_reg(cmd_buffer& cb, std::uint32_t reg, compare func, std::uint32_t reference, std::uint32_t mask,
                   std::uint32_t poll_interval) {
  emit_wait_reg_mem(cb, 0, 0, func, reg, 0, reference, mask, poll_interval);
}

void emit_write_wait_reg(cmd_buffer& cb, std::uint32_t write_reg, std::uint32_t done_reg, compare func,
                         std::uint32_t reference, std::uint32_t mask, std::uint32_t poll_interval) {
  emit_wait_reg_mem(cb, 0, 1, func, write_reg, done_reg, reference, mask, poll_interval);
}

void emit_acquire_mem(cmd_buffer& cb, std::uint32_t gcr_cntl) {
  if (gcr_cntl & ~gcr_cntl_mask)
    throw usage_error(str("pm4: ACQUIRE_MEM GCR_CNTL ", hex{gcr_cntl}, " has bits above 18"));
  cb.push_back(type3_header(PACKET3_ACQUIRE_MEM, acquire_mem_dwords - 1));
  cb.insert(cb.end(), {0u /* CP_COHER_CNTL: unused since gfx10 */, coher_size_all, coher_size_hi_all,
                       0u /* COHER_BASE */, 0u /* COHER_BASE_HI */, acquire_poll_interval, gcr_cntl});
}

void emit_release_mem(cmd_buffer& cb, const release_mem& r) {
  if (r.event_type > 0x3F || r.event_index > 0xF)  // EVENT_TYPE 5:0, EVENT_INDEX 11:8 (nvd.h)
    throw usage_error(str("pm4: RELEASE_MEM event ", unsigned(r.event_type), " index ", unsigned(r.event_index),
                          " does not fit 6 / 4 bits"));
  if (r.gcr & ~release_gcr_mask)
    throw usage_error(str("pm4: RELEASE_MEM gcr ", hex{r.gcr}, " has bits that are not GCR flags"));
  if (r.cache_policy > 3 || std::uint32_t(r.data) > 4 || std::uint32_t(r.interrupt) > 2)
    throw usage_error(str("pm4: RELEASE_MEM cache policy ", unsigned(r.cache_policy), ", data_sel ",
                          unsigned(r.data), ", int_sel ", unsigned(r.interrupt), " out of range (3, 4, 2)"));
  if (r.data == data_sel::value32 && r.value > 0xFFFFFFFFu)
    throw usage_error(str("pm4: RELEASE_MEM value ", hex{r.value}, " does not fit data_sel::value32"));
  if (r.data != data_sel::none)
    require_aligned(r.address, r.data == data_sel::value32 ? 4 : 8, "RELEASE_MEM address");
  cb.push_back(type3_header(PACKET3_RELEASE_MEM, release_mem_dwords - 1));
  cb.push_back(r.gcr | PACKET3_RELEASE_MEM_CACHE_POLICY(r.cache_policy) |
               PACKET3_RELEASE_MEM_EVENT_TYPE(r.event_type) | PACKET3_RELEASE_MEM_EVENT_INDEX(r.event_index));
  // DST_SEL 0: write to memory through the memory controller (nvd.h; the only use in tg).
  cb.push_back(PACKET3_RELEASE_MEM_DATA_SEL(std::uint32_t(r.data)) |
               PACKET3_RELEASE_MEM_INT_SEL(std::uint32_t(r.interrupt)) | PACKET3_RELEASE_MEM_DST_SEL(0));
  cb.insert(cb.end(), {r.address.lo(), r.address.hi(), std::uint32_t(r.value), std::uint32_t(r.value >> 32),
                       r.int_ctx_id});
}

std::uint32_t dispatch_initiator(gfx_version gfx, bool wave32) {
  std::uint32_t v = queue_field(gfx, "regCOMPUTE_DISPATCH_INITIATOR", "COMPUTE_SHADER_EN").set(0, 1);
  v = queue_field(gfx, "regCOMPUTE_DISPATCH_INITIATOR", "FORCE_START_AT_000").set(v, 1);
  if (wave32) v = queue_field(gfx, "regCOMPUTE_DISPATCH_INITIATOR", "CS_W32_EN").set(v, 1);
  return v;
}

void emit_dispatch_direct(cmd_buffer& cb, std::array<std::uint32_t, 3> workgroups, std::uint32_t initiator) {
  cb.push_back(type3_header(PACKET3_DISPATCH_DIRECT, dispatch_direct_dwords - 1));
  cb.insert(cb.end(), {workgroups[0], workgroups[1], workgroups[2], initiator});
}

void emit_event_write(cmd_buffer& cb, std::uint8_t event_type, std::uint8_t event_index) {
  if (event_type > 0x3F || event_index > 0xF)  // EVENT_TYPE 5:0, EVENT_INDEX 11:8 (nvd.h)
    throw usage_error(str("pm4: EVENT_WRITE event ", unsigned(event_type), " index ", unsigned(event_index),
                          " does not fit 6 / 4 bits"));
  cb.push_back(type3_header(PACKET3_EVENT_WRITE, event_write_dwords - 1));
  cb.push_back(EVENT_TYPE(event_type) | EVENT_INDEX(event_index));
}

void emit_indirect_buffer(cmd_buffer& cb, gpu_va ib, std::uint32_t size_dwords) {
  require_aligned(ib, 4, "INDIRECT_BUFFER address");
  if (size_dwords == 0 || size_dwords > max_ib_dwords)
    throw usage_error(str("pm4: INDIRECT_BUFFER of ", size_dwords, " dwords; the size field holds 1..",
                          max_ib_dwords, " (split the commands into several IBs)"));
  cb.push_back(type3_header(PACKET3_INDIRECT_BUFFER, indirect_buffer_dwords - 1));
  // VMID (bits 27:24, nvd.h: PACKET3_INDIRECT_BUFFER__VMID) stays 0: tg runs everything in VMID 0.
  cb.insert(cb.end(), {ib.lo(), ib.hi(), size_dwords | INDIRECT_BUFFER_VALID});
}

std::vector<std::uint32_t> user_sgprs(const kernel_summary& k, const dispatch_args& a) {
  constexpr std::pair<std::uint16_t, const char*> unsupported[] = {
      {kcp_queue_ptr, "queue pointer"}, {kcp_dispatch_id, "dispatch id"},
      {kcp_flat_scratch_init, "flat scratch init"}, {kcp_private_segment_size, "private segment size"}};
  for (auto [bit, what] : unsupported)
    if (k.code_properties & bit)
      throw usage_error(str("pm4: the kernel asks for the ", what, " user SGPR (kernel_code_properties ",
                            hex{k.code_properties}, "), which tg does not provide; compile without it"));
  require_aligned(a.kernargs, 8, "kernarg address");
  std::vector<std::uint32_t> sgprs;
  auto push = [&sgprs](std::initializer_list<std::uint32_t> words) {
    for (std::uint32_t w : words) sgprs.push_back(w);
  };
  if (k.code_properties & kcp_private_segment_buffer)
    push({a.scratch.lo(), a.scratch.hi() | scratch_vsharp_swizzle, scratch_vsharp_num_records, scratch_vsharp_word3});
  if (k.code_properties & kcp_dispatch_ptr) {
    gpu_va packet = a.kernargs + k.kernarg_bytes;  // the HSA dispatch packet follows the arguments (ops_amd.py)
    push({packet.lo(), packet.hi()});
  }
  push({a.kernargs.lo(), a.kernargs.hi()});
  return sgprs;
}

void emit_dispatch(cmd_buffer& cb, const kernel_summary& k, const dispatch_args& a) {
  const reg_table& regs = queue_regs(a.gfx);
  require_aligned(k.entry, 256, "kernel entry");  // COMPUTE_PGM_LO holds address >> 8
  require_aligned(a.scratch, 256, "scratch base");
  std::uint32_t pgm_hi = high_bits(a.gfx, "regCOMPUTE_PGM_HI", k.entry, "kernel entry");
  std::uint32_t scratch_hi = high_bits(a.gfx, "regCOMPUTE_DISPATCH_SCRATCH_BASE_HI", a.scratch, "scratch base");

  std::uint32_t granules = (k.group_segment_bytes + lds_granule_bytes - 1) / lds_granule_bytes;
  if (granules > a.lds_bytes_max / lds_granule_bytes)
    throw usage_error(str("pm4: too many resources requested: group_segment_size ", k.group_segment_bytes,
                          " bytes of LDS, the device has ", a.lds_bytes_max));
  std::uint32_t rsrc1 = k.rsrc1;
  if (a.gfx == gfx_version::gfx11)  // PRIV, to work around CWSR (ops_amd.py: AMDProgram.__init__)
    rsrc1 = queue_field(a.gfx, "regCOMPUTE_PGM_RSRC1", "PRIV").set(rsrc1, 1);
  std::uint32_t rsrc2 = queue_field(a.gfx, "regCOMPUTE_PGM_RSRC2", "LDS_SIZE").set(k.rsrc2, granules);
  std::uint32_t limits = regs.encode("regCOMPUTE_RESOURCE_LIMITS", {{"WAVES_PER_SH", a.waves_per_sh}});
  std::array<std::uint32_t, 3> threads{};
  constexpr std::string_view num_thread[] = {"regCOMPUTE_NUM_THREAD_X", "regCOMPUTE_NUM_THREAD_Y",
                                             "regCOMPUTE_NUM_THREAD_Z"};
  for (int i = 0; i < 3; ++i) {
    const reg_field& full = regs.field(regs.reg(num_thread[i]), "NUM_THREAD_FULL");
    if (a.workgroup_size[i] == 0 || a.workgroup_size[i] > full.max_value())
      throw usage_error(str("pm4: workgroup size ", a.workgroup_size[i], " in ", "xyz"[i], " is outside 1..",
                            full.max_value(), " (", num_thread[i], ".NUM_THREAD_FULL on ", regs.ip, ")"));
    threads[i] = full.set(0, a.workgroup_size[i]);
  }
  std::vector<std::uint32_t> sgprs = user_sgprs(k, a);
  if (sgprs.size() > 16) throw usage_error(str("pm4: ", sgprs.size(), " user SGPRs; COMPUTE_USER_DATA has 16"));

  std::size_t start = cb.size();
  emit_acquire_mem(cb, gcr_before_dispatch);                                          // 5
  emit_sh(cb, reg_pgm_lo, {std::uint32_t(k.entry.value >> 8), pgm_hi});                 // 6
  emit_sh(cb, reg_pgm_rsrc1, {rsrc1, rsrc2});                                           // 7
  emit_sh(cb, reg_pgm_rsrc3, {k.rsrc3});                                                // 8
  emit_sh(cb, reg_tmpring_size, {a.tmpring_size});                                      // 9
  emit_sh(cb, reg_scratch_base_lo, {std::uint32_t(a.scratch.value >> 8), scratch_hi});  // 10
  emit_sh(cb, reg_restart_x, {0, 0, 0});                                                // 11
  emit_set_sh_reg(cb, reg_user_data_0, sgprs);                                          // 12
  emit_sh(cb, reg_resource_limits, {limits});                                           // 13
  emit_sh(cb, reg_start_x, {0, 0, 0, threads[0], threads[1], threads[2], 0, 0});        // 14
  emit_dispatch_direct(cb, a.workgroups, dispatch_initiator(a.gfx, k.code_properties & kcp_wavefront_size32));
  emit_event_write(cb, CS_PARTIAL_FLUSH, 4);  // 16: index 4 = *S_PARTIAL_FLUSH (nvd.h EVENT_INDEX)
  if (cb.size() - start != dispatch_dwords(sgprs.size())) TG_UNREACHABLE("dispatch_dwords is out of date");
}

}  // namespace tg::queue::pm4
