// personality.hpp: what differs between the emulated GPUs: versions, register indices and field
// layouts. A personality is chosen by processor (the LLVM name the card's GC version maps to); the
// generation (gfx_gen) stays what is generation-wide (page-table format, ISA, boot steps).
//
// gfx1100 is an RX 7900 XTX (Navi 31: GC 11.0.0, SDMA 6.0.0, MMHUB 3.0.0, NBIO 4.3.0, MP0/MP1 13.0.0,
// HDP 6.0.0, OSSSYS 6.0.0); gfx1101 an RX 7800 XT (Navi 32: GC 11.0.3, SDMA 6.0.3, MP0/MP1 13.0.10,
// the rest as Navi 31; personality.cpp cites each); gfx1200 an RX 9060, the card of seed 000 and of
// the reference's mock (Navi 44: GC 12.0.0, SDMA 7.0.0, MMHUB 4.1.0, NBIF 6.3.1, MP0/MP1 14.0.2,
// HDP 7.0.0, OSSSYS 7.0.0; tinygrad/runtime/support/am/amdev.py); gfx1201 an RX 9070 XT (Navi 48:
// GC 12.0.1, SDMA 7.0.1, MP0/MP1 14.0.3, the rest as Navi 44). Indices
// are the generated tables' offsets (drivers/amd/regs, from the Linux headers) plus the navi10 IP
// bases the reference mock also uses and the discovery table publishes (tinygrad's mock GPU (test/mockgpu/amd); Linux drivers/gpu/drm/amd/include/asic_reg;
// discovery_table.hpp); the NBIO and MP registers, which have no generated table yet, are written
// out with their source.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/memory/gfx_gen.hpp"
#include "runtime/queue/reg_table.hpp"

namespace tg::emu {

using memory::gfx_gen;
using queue::reg_field;

struct ip_version {
  std::uint8_t major, minor, revision;
};

// GC: queues, compute dispatch state, the GC hub (GCVM) and its fault registers.
struct gc_registers {
  std::uint32_t grbm_gfx_cntl;
  std::uint32_t hqd_first, hqd_last;  // CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI, banked per HQD (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)
  std::uint32_t hqd_active, hqd_dequeue_request, hqd_pq_base, hqd_pq_base_hi, hqd_pq_rptr,
      hqd_pq_rptr_report_addr, hqd_pq_rptr_report_addr_hi, hqd_pq_wptr_poll_addr, hqd_pq_wptr_poll_addr_hi,
      hqd_pq_doorbell_control, hqd_pq_control, hqd_pq_wptr_lo, hqd_pq_wptr_hi;
  std::uint32_t cp_stat, rlc_safe_mode, rlc_bootload_status;
  std::uint32_t compute_dispatch_initiator, compute_dim_x, compute_num_thread_x, compute_pgm_lo, compute_pgm_hi,
      compute_pgm_rsrc2, compute_user_data_0;
  std::uint32_t vm_pt_base_lo, vm_pt_base_hi, vm_pt_start_lo, vm_pt_start_hi, vm_pt_end_lo, vm_pt_end_hi;
  std::uint32_t vm_inv_req, vm_inv_ack, vm_inv_sem;
  std::uint32_t vm_fault_cntl, vm_fault_status, vm_fault_addr_lo, vm_fault_addr_hi;
  std::uint32_t fb_location_base, fb_location_top, system_aperture_low, system_aperture_high;
  std::uint32_t scratch_reg6, scratch_reg7;  // the warm-boot flags (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)
  std::uint32_t grbm_soft_reset;
  std::uint32_t cp_pfp_start, cp_pfp_start_hi, cp_me_start, cp_me_start_hi, cp_me_cntl;  // GC 12 gfx pipes
};

// SDMA0 queue 0 (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c).
struct sdma_registers {
  std::uint32_t rb_cntl, rb_base, rb_base_hi, rb_rptr, rb_rptr_hi, rb_wptr, rb_wptr_hi, rb_rptr_addr_lo,
      rb_rptr_addr_hi, rb_wptr_poll_addr_lo, rb_wptr_poll_addr_hi, doorbell, doorbell_offset, minor_ptr_update;
};

// MM hub: the second TLB invalidation engine the driver flushes (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c).
struct mmhub_registers {
  std::uint32_t inv_req, inv_ack, inv_sem, fb_location_base, fb_location_top;
};

// NBIO 4.3.0 (gfx11) and NBIF 6.3.1 (gfx12) agree on all of these (the IP offset headers in drivers/gpu/drm/amd/include/asic_reg)
// but the S2A doorbell entries, which sit elsewhere on each (doorbell_routes.hpp).
struct nbio_registers {
  std::uint32_t mm_index, mm_data, mm_index_hi, rsmu_index, rsmu_data, config_memsize, hdp_flush_req,
      hdp_flush_done, remap_hdp_mem_flush_cntl;
  std::uint32_t s2a_entry[4];  // S2A_DOORBELL_ENTRY_0..3_CTRL (gfx12: GDC_S2A0_S2A_DOORBELL_ENTRY_n_CTRL)
};

// MP0 (PSP) and MP1 (SMU) mailboxes (tinygrad's mock GPU (test/mockgpu/amd); the IP offset headers in drivers/gpu/drm/amd/include/asic_reg). smu_alias_base: MP1 14.0.2 also answers at
// its own segment 1 (0xDC0000 + 0x40 + n, mp_14_0_2_offset.h); 0 when there is no second window.
struct mp_registers {
  std::uint32_t psp_35, psp_36, psp_64, psp_67, psp_69, psp_70, psp_71, psp_81;
  std::uint32_t smu_msg, smu_arg, smu_resp, smu_debug_msg, smu_debug_arg, smu_debug_resp;
  std::uint32_t smu_alias_delta;  // add to an smu_* index for the second window; 0 for none
};

// OSSSYS: IH ring 0 (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
struct ih_registers {
  std::uint32_t rb_cntl, rb_base, rb_base_hi, rb_rptr, rb_wptr, rb_wptr_addr_lo, rb_wptr_addr_hi;
};

struct register_fields {
  reg_field grbm_pipeid, grbm_meid, grbm_queueid;
  reg_field hqd_active, hqd_queue_size, hqd_doorbell_offset, hqd_doorbell_en;
  reg_field pgm_hi_data, num_thread_full, rsrc2_user_sgpr;
  reg_field rb_enable, rb_size, rb_rptr_writeback_enable, sdma_doorbell_enable, sdma_doorbell_offset;
  reg_field inv_per_vmid_req, inv_clear_fault, fault_cntl_clear;
  reg_field fault_more, fault_walker_error, fault_permission, fault_mapping_error, fault_cid, fault_rw, fault_vmid;
  reg_field rlc_safe_mode_cmd, bootload_complete;
  reg_field pfp_pipe0_reset, me_pipe0_reset;
  reg_field fb_base, system_aperture_addr;
  reg_field ih_rb_enable, ih_rb_size, ih_wptr_overflow_enable, ih_wptr_overflow_clear, ih_rb_overflow, ih_offset;
};

struct personality {
  gfx_gen gen;
  std::string_view target;          // the LLVM processor name: "gfx1101"
  std::string_view card;            // "RX 7800 XT", for messages
  std::uint16_t pci_device_id = 0;  // what its PCI config space (or the bridge's TLPs) report
  ip_version gc, sdma, mmhub, nbio, mp0, mp1, hdp, osssys;
  gc_registers gc_reg;
  sdma_registers sdma_reg;
  mmhub_registers mm_reg;
  nbio_registers nbio_reg;
  mp_registers mp_reg;
  ih_registers ih_reg;
  register_fields field;
  const queue::reg_table* gc_table;  // for decoding in messages and tests
};

// The card for `processor` ("gfx1100", "gfx1101", "gfx1200", "gfx1201"); an empty one is the
// generation's first (gfx1100, gfx1200). usage_error for another name or one of another generation.
const personality& personality_of(gfx_gen gen, std::string_view processor = {});
// The generation of an emulated processor, or nullopt when no emulated card is that processor.
std::optional<gfx_gen> emulated_processor_gen(std::string_view processor);

}  // namespace tg::emu
