// personality.cpp: the emulated cards' versions, and their register maps looked up by name in the
// generated tables.
#include "drivers/emu/personality.hpp"

#include <span>

#include <tg/core/error.hpp>

#include "drivers/amd/regs/gc_11_0_0.hpp"
#include "drivers/amd/regs/gc_11_0_3.hpp"
#include "drivers/amd/regs/gc_12_0_0.hpp"
#include "drivers/amd/regs/mmhub_3_0_0.hpp"
#include "drivers/amd/regs/mmhub_4_1_0.hpp"
#include "drivers/amd/regs/osssys_6_0_0.hpp"
#include "drivers/amd/regs/osssys_7_0_0.hpp"

namespace tg::emu {

namespace {

namespace regs = tg::amd::regs;

// One IP's table with the navi10 bases of its segments.
struct ip_table {
  const queue::reg_table& table;
  std::span<const std::uint32_t> bases;

  std::uint32_t index(std::string_view name) const {
    const queue::reg_info& r = table.reg(name);
    return bases[r.base_index] + r.offset;
  }
  reg_field field(std::string_view reg, std::string_view name) const { return table.field(table.reg(reg), name); }
};

// NBIO / NBIF registers: offset + the segment base of tinygrad's mock GPU (test/mockgpu/amd) (NBIO bases 0x0, 0x14, 0xD20).
// Offsets from Linux 6.12 include/asic_reg/nbio/nbio_4_3_0_offset.h, identical in
// nbif/nbif_6_3_1_offset.h: BIF_BX_PF0_MM_INDEX 0x0 / MM_DATA 0x1 / MM_INDEX_HI 0x6 (segment 0),
// BIF_BX_PF0_RSMU_INDEX 0x0 / RSMU_DATA 0x1 (segment 1), RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE 0xC3,
// BIF_BX_PF0_GPU_HDP_FLUSH_REQ 0x106 / _DONE 0x107, BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL 0x12D
// (segment 2). The results match the IP offset headers in drivers/gpu/drm/amd/include/asic_reg.
// The S2A doorbell entries differ: nbio_4_3_0_offset.h regS2A_DOORBELL_ENTRY_0_CTRL 0x7A80 in
// segment 5 (base 0x4040000, beyond the BAR: reached through RSMU_INDEX / RSMU_DATA);
// nbif_6_3_1_offset.h regGDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL 0x1CB in segment 2. Entries 1..3 follow.
constexpr nbio_registers nbio_regs(bool nbif) {
  const std::uint32_t s2a = nbif ? 0xD20 + 0x1CB : 0x4040000 + 0x7A80;
  return {0x0, 0x1, 0x6, 0x14 + 0x0, 0x14 + 0x1, 0xD20 + 0xC3, 0xD20 + 0x106, 0xD20 + 0x107, 0xD20 + 0x12D,
          {s2a, s2a + 1, s2a + 2, s2a + 3}};
}
constexpr nbio_registers nbio = nbio_regs(false);
static_assert(nbio.config_memsize == 0xDE3 && nbio.hdp_flush_req == 0xE26 && nbio.remap_hdp_mem_flush_cntl == 0xE4D);
static_assert(nbio_regs(true).s2a_entry[0] == 0xEEB && nbio_regs(false).s2a_entry[2] == 0x4047A82);

// MP0 / MP1 C2PMSG_n: MP base 0x16000 (tinygrad's mock GPU (test/mockgpu/amd)) + 0x40 + n for MP0 (mp_13_0_0_offset.h
// regMP0_SMN_C2PMSG_35 = 0x63, mp_14_0_2_offset.h regMPASP_SMN_C2PMSG_35 = 0x63) and + 0x240 + n for
// MP1 13.0.0 (regMP1_SMN_C2PMSG_66 = 0x282), the indices the IP offset headers in drivers/gpu/drm/amd/include/asic_reg lists for both generations. MP1
// 14.0.2 puts C2PMSG_n at segment 1 + 0x40 + n (0xDC0000 + 0x82 for 66); the emulator answers there too.
constexpr std::uint32_t mp_base = 0x16000, mp1_14_seg1 = 0xDC0000;
constexpr std::uint32_t mp0_msg(unsigned n) { return mp_base + 0x40 + n; }
constexpr std::uint32_t mp1_msg(unsigned n) { return mp_base + 0x240 + n; }
constexpr mp_registers mp_regs(bool mp14) {
  return {mp0_msg(35), mp0_msg(36), mp0_msg(64), mp0_msg(67), mp0_msg(69), mp0_msg(70), mp0_msg(71), mp0_msg(81),
          mp1_msg(66), mp1_msg(82), mp1_msg(90), mp1_msg(75), mp1_msg(53), mp1_msg(54),
          mp14 ? mp1_14_seg1 + 0x40 - (mp_base + 0x240) : 0};
}
static_assert(mp_regs(false).psp_35 == 0x16063 && mp_regs(false).psp_81 == 0x16091);
static_assert(mp_regs(false).smu_msg == 0x16282 && mp_regs(false).smu_resp == 0x1629A && mp_regs(false).smu_debug_arg == 0x16275);
static_assert(mp_regs(true).smu_msg + mp_regs(true).smu_alias_delta == 0xDC0082);

// A card: what its discovery table lists (one version for MP0 and MP1, as on all four).
struct card {
  gfx_gen gen;
  std::string_view target, name;
  std::uint16_t pci_device_id;
  ip_version gc, sdma, mmhub, nbio, mp, hdp, osssys;
};

personality make(const card& c, ip_table gc, ip_table mm, ip_table oss) {
  const bool g12 = c.gen == gfx_gen::gfx12;
  const std::string_view fault_status = g12 ? "regGCVM_L2_PROTECTION_FAULT_STATUS_LO32"
                                            : "regGCVM_L2_PROTECTION_FAULT_STATUS";
  personality p{};
  p.gen = c.gen;
  p.target = c.target;
  p.card = c.name;
  p.pci_device_id = c.pci_device_id;
  p.gc = c.gc;
  p.sdma = c.sdma;
  p.mmhub = c.mmhub;
  p.nbio = c.nbio;
  p.mp0 = p.mp1 = c.mp;
  p.hdp = c.hdp;
  p.osssys = c.osssys;
  p.gc_table = &gc.table;

  gc_registers& r = p.gc_reg;
  r.grbm_gfx_cntl = gc.index("regGRBM_GFX_CNTL");
  r.hqd_first = gc.index("regCP_MQD_BASE_ADDR");
  r.hqd_last = gc.index("regCP_HQD_PQ_WPTR_HI");
  r.hqd_active = gc.index("regCP_HQD_ACTIVE");
  r.hqd_dequeue_request = gc.index("regCP_HQD_DEQUEUE_REQUEST");
  r.hqd_pq_base = gc.index("regCP_HQD_PQ_BASE");
  r.hqd_pq_base_hi = gc.index("regCP_HQD_PQ_BASE_HI");
  r.hqd_pq_rptr = gc.index("regCP_HQD_PQ_RPTR");
  r.hqd_pq_rptr_report_addr = gc.index("regCP_HQD_PQ_RPTR_REPORT_ADDR");
  r.hqd_pq_rptr_report_addr_hi = gc.index("regCP_HQD_PQ_RPTR_REPORT_ADDR_HI");
  r.hqd_pq_wptr_poll_addr = gc.index("regCP_HQD_PQ_WPTR_POLL_ADDR");
  r.hqd_pq_wptr_poll_addr_hi = gc.index("regCP_HQD_PQ_WPTR_POLL_ADDR_HI");
  r.hqd_pq_doorbell_control = gc.index("regCP_HQD_PQ_DOORBELL_CONTROL");
  r.hqd_pq_control = gc.index("regCP_HQD_PQ_CONTROL");
  r.hqd_pq_wptr_lo = gc.index("regCP_HQD_PQ_WPTR_LO");
  r.hqd_pq_wptr_hi = gc.index("regCP_HQD_PQ_WPTR_HI");
  r.cp_stat = gc.index("regCP_STAT");
  r.rlc_safe_mode = gc.index("regRLC_SAFE_MODE");
  r.rlc_bootload_status = gc.index("regRLC_RLCS_BOOTLOAD_STATUS");
  r.compute_dispatch_initiator = gc.index("regCOMPUTE_DISPATCH_INITIATOR");
  r.compute_dim_x = gc.index("regCOMPUTE_DIM_X");
  r.compute_num_thread_x = gc.index("regCOMPUTE_NUM_THREAD_X");
  r.compute_pgm_lo = gc.index("regCOMPUTE_PGM_LO");
  r.compute_pgm_hi = gc.index("regCOMPUTE_PGM_HI");
  r.compute_pgm_rsrc2 = gc.index("regCOMPUTE_PGM_RSRC2");
  r.compute_user_data_0 = gc.index("regCOMPUTE_USER_DATA_0");
  r.vm_pt_base_lo = gc.index("regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32");
  r.vm_pt_base_hi = gc.index("regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32");
  r.vm_pt_start_lo = gc.index("regGCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32");
  r.vm_pt_start_hi = gc.index("regGCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32");
  r.vm_pt_end_lo = gc.index("regGCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32");
  r.vm_pt_end_hi = gc.index("regGCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32");
  r.vm_inv_req = gc.index("regGCVM_INVALIDATE_ENG17_REQ");
  r.vm_inv_ack = gc.index("regGCVM_INVALIDATE_ENG17_ACK");
  r.vm_inv_sem = gc.index("regGCVM_INVALIDATE_ENG17_SEM");
  r.vm_fault_cntl = gc.index("regGCVM_L2_PROTECTION_FAULT_CNTL");
  r.vm_fault_status = gc.index(fault_status);
  r.vm_fault_addr_lo = gc.index("regGCVM_L2_PROTECTION_FAULT_ADDR_LO32");
  r.vm_fault_addr_hi = gc.index("regGCVM_L2_PROTECTION_FAULT_ADDR_HI32");
  r.fb_location_base = gc.index("regGCMC_VM_FB_LOCATION_BASE");
  r.fb_location_top = gc.index("regGCMC_VM_FB_LOCATION_TOP");
  r.system_aperture_low = gc.index("regGCMC_VM_SYSTEM_APERTURE_LOW_ADDR");
  r.system_aperture_high = gc.index("regGCMC_VM_SYSTEM_APERTURE_HIGH_ADDR");
  r.scratch_reg6 = gc.index("regSCRATCH_REG6");
  r.scratch_reg7 = gc.index("regSCRATCH_REG7");
  r.grbm_soft_reset = gc.index("regGRBM_SOFT_RESET");
  r.cp_pfp_start = gc.index("regCP_PFP_PRGRM_CNTR_START");
  r.cp_pfp_start_hi = gc.index("regCP_PFP_PRGRM_CNTR_START_HI");
  r.cp_me_start = gc.index("regCP_ME_PRGRM_CNTR_START");
  r.cp_me_start_hi = gc.index("regCP_ME_PRGRM_CNTR_START_HI");
  r.cp_me_cntl = gc.index("regCP_ME_CNTL");

  sdma_registers& s = p.sdma_reg;
  s.rb_cntl = gc.index("regSDMA0_QUEUE0_RB_CNTL");
  s.rb_base = gc.index("regSDMA0_QUEUE0_RB_BASE");
  s.rb_base_hi = gc.index("regSDMA0_QUEUE0_RB_BASE_HI");
  s.rb_rptr = gc.index("regSDMA0_QUEUE0_RB_RPTR");
  s.rb_rptr_hi = gc.index("regSDMA0_QUEUE0_RB_RPTR_HI");
  s.rb_wptr = gc.index("regSDMA0_QUEUE0_RB_WPTR");
  s.rb_wptr_hi = gc.index("regSDMA0_QUEUE0_RB_WPTR_HI");
  s.rb_rptr_addr_lo = gc.index("regSDMA0_QUEUE0_RB_RPTR_ADDR_LO");
  s.rb_rptr_addr_hi = gc.index("regSDMA0_QUEUE0_RB_RPTR_ADDR_HI");
  s.rb_wptr_poll_addr_lo = gc.index("regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO");
  s.rb_wptr_poll_addr_hi = gc.index("regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI");
  s.doorbell = gc.index("regSDMA0_QUEUE0_DOORBELL");
  s.doorbell_offset = gc.index("regSDMA0_QUEUE0_DOORBELL_OFFSET");
  s.minor_ptr_update = gc.index("regSDMA0_QUEUE0_MINOR_PTR_UPDATE");

  mmhub_registers& m = p.mm_reg;
  m.inv_req = mm.index("regMMVM_INVALIDATE_ENG17_REQ");
  m.inv_ack = mm.index("regMMVM_INVALIDATE_ENG17_ACK");
  m.inv_sem = mm.index("regMMVM_INVALIDATE_ENG17_SEM");
  m.fb_location_base = mm.index("regMMMC_VM_FB_LOCATION_BASE");
  m.fb_location_top = mm.index("regMMMC_VM_FB_LOCATION_TOP");

  p.nbio_reg = nbio_regs(g12);
  p.mp_reg = mp_regs(g12);
  ih_registers& ih = p.ih_reg;
  ih.rb_cntl = oss.index("regIH_RB_CNTL");
  ih.rb_base = oss.index("regIH_RB_BASE");
  ih.rb_base_hi = oss.index("regIH_RB_BASE_HI");
  ih.rb_rptr = oss.index("regIH_RB_RPTR");
  ih.rb_wptr = oss.index("regIH_RB_WPTR");
  ih.rb_wptr_addr_lo = oss.index("regIH_RB_WPTR_ADDR_LO");
  ih.rb_wptr_addr_hi = oss.index("regIH_RB_WPTR_ADDR_HI");

  register_fields& f = p.field;
  f.grbm_pipeid = gc.field("regGRBM_GFX_CNTL", "PIPEID");
  f.grbm_meid = gc.field("regGRBM_GFX_CNTL", "MEID");
  f.grbm_queueid = gc.field("regGRBM_GFX_CNTL", "QUEUEID");
  f.hqd_active = gc.field("regCP_HQD_ACTIVE", "ACTIVE");
  f.hqd_queue_size = gc.field("regCP_HQD_PQ_CONTROL", "QUEUE_SIZE");
  f.hqd_doorbell_offset = gc.field("regCP_HQD_PQ_DOORBELL_CONTROL", "DOORBELL_OFFSET");
  f.hqd_doorbell_en = gc.field("regCP_HQD_PQ_DOORBELL_CONTROL", "DOORBELL_EN");
  f.pgm_hi_data = gc.field("regCOMPUTE_PGM_HI", "DATA");
  f.num_thread_full = gc.field("regCOMPUTE_NUM_THREAD_X", "NUM_THREAD_FULL");
  f.rsrc2_user_sgpr = gc.field("regCOMPUTE_PGM_RSRC2", "USER_SGPR");
  f.rb_enable = gc.field("regSDMA0_QUEUE0_RB_CNTL", "RB_ENABLE");
  f.rb_size = gc.field("regSDMA0_QUEUE0_RB_CNTL", "RB_SIZE");
  f.rb_rptr_writeback_enable = gc.field("regSDMA0_QUEUE0_RB_CNTL", "RPTR_WRITEBACK_ENABLE");
  f.sdma_doorbell_enable = gc.field("regSDMA0_QUEUE0_DOORBELL", "ENABLE");
  f.sdma_doorbell_offset = gc.field("regSDMA0_QUEUE0_DOORBELL_OFFSET", "OFFSET");
  f.inv_per_vmid_req = gc.field("regGCVM_INVALIDATE_ENG17_REQ", "PER_VMID_INVALIDATE_REQ");
  f.inv_clear_fault = gc.field("regGCVM_INVALIDATE_ENG17_REQ", "CLEAR_PROTECTION_FAULT_STATUS_ADDR");
  f.fault_cntl_clear = gc.field("regGCVM_L2_PROTECTION_FAULT_CNTL", "CLEAR_PROTECTION_FAULT_STATUS_ADDR");
  f.fault_more = gc.field(fault_status, "MORE_FAULTS");
  f.fault_walker_error = gc.field(fault_status, "WALKER_ERROR");
  f.fault_permission = gc.field(fault_status, "PERMISSION_FAULTS");
  f.fault_mapping_error = gc.field(fault_status, "MAPPING_ERROR");
  f.fault_cid = gc.field(fault_status, "CID");
  f.fault_rw = gc.field(fault_status, "RW");
  f.fault_vmid = gc.field(fault_status, "VMID");
  f.rlc_safe_mode_cmd = gc.field("regRLC_SAFE_MODE", "CMD");
  f.bootload_complete = gc.field("regRLC_RLCS_BOOTLOAD_STATUS", "BOOTLOAD_COMPLETE");
  f.pfp_pipe0_reset = gc.field("regCP_ME_CNTL", "PFP_PIPE0_RESET");
  f.me_pipe0_reset = gc.field("regCP_ME_CNTL", "ME_PIPE0_RESET");
  f.fb_base = gc.field("regGCMC_VM_FB_LOCATION_BASE", "FB_BASE");
  f.system_aperture_addr = gc.field("regGCMC_VM_SYSTEM_APERTURE_LOW_ADDR", "LOGICAL_ADDR");
  f.ih_rb_enable = oss.field("regIH_RB_CNTL", "RB_ENABLE");
  f.ih_rb_size = oss.field("regIH_RB_CNTL", "RB_SIZE");
  f.ih_wptr_overflow_enable = oss.field("regIH_RB_CNTL", "WPTR_OVERFLOW_ENABLE");
  f.ih_wptr_overflow_clear = oss.field("regIH_RB_CNTL", "WPTR_OVERFLOW_CLEAR");
  f.ih_rb_overflow = oss.field("regIH_RB_WPTR", "RB_OVERFLOW");
  f.ih_offset = oss.field("regIH_RB_WPTR", "OFFSET");
  return p;
}

// The four cards. PCI ids: 0x744C Navi 31, 0x7590 Navi 44 and 0x7550 Navi 48 as
// runtime/transport/pci/pci_devices.cpp lists them (the reference probes them:
// tinygrad/runtime/ops_amd.py: PCIIface); 0x747E is the RX 7800 XT / 7700 XT (Navi 32; the PCI ID
// Repository, pci.ids; amdgpu_drv.c matches these cards by class, not by id).
//
// Navi 32's GC 11.0.3, MP0/MP1 13.0.10 and SDMA 6.0.3 come together in Linux: amdkfd/kfd_device.c
// maps GC 11.0.3 to gfx1101 (kgd2kfd_probe); the firmware set is gfx_v11_0.c / imu_v11_0.c
// MODULE_FIRMWARE("amdgpu/gc_11_0_3_{pfp,me,mec,rlc,imu}.bin"), psp_v13_0.c psp_13_0_10_sos.bin,
// smu_v13_0.c smu_13_0_10.bin (driven by smu_v13_0_0_ppt.c, Navi 31's SMU code) and sdma_v6_0.c
// sdma_6_0_3.bin, the set linux-firmware added as "Navi32 dGPU firmware". Its MMHUB 3.0.0,
// NBIO 4.3.0, HDP 6.0.0 and OSSSYS 6.0.0 are NOT confirmed: Linux's GC 11.0.3 bring-up added no
// new version of those blocks (amdgpu_discovery.c lists 3.0.0 / 3.0.2, 4.3.0 / 4.3.1, 6.0.0 /
// 6.0.1 and 6.0.0 / 6.0.2, the second of each Navi 33's), so Navi 32 reports one of each pair; we
// take Navi 31's, its chiplet sibling. Its GC hub registers are not 11.0.0's: gmc_v11_0.c gives GC
// 11.0.3 gfxhub_v3_0_3.c, which reads gc_11_0_3_offset.h (the generated gc_11_0_3 table).
//
// Navi 48's GC 12.0.1, MP0/MP1 14.0.3 and SDMA 7.0.1: kfd_device.c maps GC 12.0.1 to gfx1201;
// gfx_v12_0.c / imu_v12_0.c gc_12_0_1_{pfp,me,mec,rlc,imu}.bin, psp_v14_0.c psp_14_0_3_sos.bin,
// smu_v14_0.c smu_14_0_3.bin (smu_v14_0_2_ppt.c drives 14.0.2 and 14.0.3), sdma_v7_0.c sdma_7_0_1.bin.
// Its MMHUB 4.1.0, NBIF 6.3.1, HDP 7.0.0 and OSSSYS 7.0.0 are the only gfx12 versions Linux 6.12's
// amdgpu_discovery.c and gmc_v12_0.c know (not confirmed from a card's table). GC 12.0.1 uses
// 12.0.0's registers (gfx_v12_0.c and gmc_v12_0.c: gfxhub_v12_0 read gc_12_0_0_offset.h for both).
constexpr card cards[] = {
    {gfx_gen::gfx11, "gfx1100", "RX 7900 XTX", 0x744C, {11, 0, 0}, {6, 0, 0}, {3, 0, 0}, {4, 3, 0}, {13, 0, 0}, {6, 0, 0}, {6, 0, 0}},
    {gfx_gen::gfx11, "gfx1101", "RX 7800 XT", 0x747E, {11, 0, 3}, {6, 0, 3}, {3, 0, 0}, {4, 3, 0}, {13, 0, 10}, {6, 0, 0}, {6, 0, 0}},
    {gfx_gen::gfx12, "gfx1200", "RX 9060", 0x7590, {12, 0, 0}, {7, 0, 0}, {4, 1, 0}, {6, 3, 1}, {14, 0, 2}, {7, 0, 0}, {7, 0, 0}},
    {gfx_gen::gfx12, "gfx1201", "RX 9070 XT", 0x7550, {12, 0, 1}, {7, 0, 1}, {4, 1, 0}, {6, 3, 1}, {14, 0, 3}, {7, 0, 0}, {7, 0, 0}},
};

personality make(const card& c) {
  const ip_table gc = c.gen == gfx_gen::gfx12 ? ip_table{regs::gc_12_0_0::table, regs::gc_12_0_0::navi10_bases}
                      : c.gc.revision == 3    ? ip_table{regs::gc_11_0_3::table, regs::gc_11_0_3::navi10_bases}
                                              : ip_table{regs::gc_11_0_0::table, regs::gc_11_0_0::navi10_bases};
  if (c.gen == gfx_gen::gfx12)
    return make(c, gc, {regs::mmhub_4_1_0::table, regs::mmhub_4_1_0::navi10_bases},
                {regs::osssys_7_0_0::table, regs::osssys_7_0_0::navi10_bases});
  return make(c, gc, {regs::mmhub_3_0_0::table, regs::mmhub_3_0_0::navi10_bases},
              {regs::osssys_6_0_0::table, regs::osssys_6_0_0::navi10_bases});
}

}  // namespace

std::optional<gfx_gen> emulated_processor_gen(std::string_view processor) {
  for (const card& c : cards)
    if (c.target == processor) return c.gen;
  return std::nullopt;
}

const personality& personality_of(gfx_gen gen, std::string_view processor) {
  static const personality all[] = {make(cards[0]), make(cards[1]), make(cards[2]), make(cards[3])};
  static_assert(std::size(cards) == 4);
  if (processor.empty()) processor = gen == gfx_gen::gfx12 ? "gfx1200" : "gfx1100";
  for (const personality& p : all)
    if (p.target == processor) {
      if (p.gen != gen)
        throw usage_error(str("emu: ", processor, " (an ", p.card, ") is a gfx", gen == gfx_gen::gfx12 ? "11" : "12",
                              " processor, not a gfx", gen == gfx_gen::gfx12 ? "12" : "11", " one"));
      return p;
    }
  throw usage_error(str("emu: no emulated GPU is a ", processor,
                        "; choose gfx1100 (RX 7900 XTX), gfx1101 (RX 7800 XT), gfx1200 (RX 9060) or gfx1201 (RX 9070 XT)"));
}

}  // namespace tg::emu
