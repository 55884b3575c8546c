// gfx_v11.cpp: RLC wait, MEC set-up and the MQD/HQD compute queue (see gfx_v11.hpp).
#include "drivers/amd/ip/gfx_v11.hpp"

#include <array>
#include <bit>
#include <thread>

#include <tg/core/error.hpp>

#include "drivers/amd/ip/nbio_doorbell.hpp"

namespace tg::amd {

namespace {
constexpr std::uint32_t mqd_header = 0xC0310800;   // tinygrad/runtime/support/am/ip.py; gfx_v11_0.c
constexpr std::size_t mqd_dwords = 1024, mqd_register_image = 128;  // v11_structs.h: cp_mqd_base_addr_lo at 128
constexpr std::size_t static_thread_mgmt[] = {23, 24, 26, 27, 44, 45, 46, 47};  // compute_static_thread_mgmt_se0..7
constexpr std::uint32_t mec_doorbell_range_upper = 0xF8;  // tinygrad/runtime/support/am/ip.py; gfx_v11_0.cCC 0
const auto mec_settle = std::chrono::milliseconds(50);    // tinygrad/runtime/support/am/amdev.py
std::uint32_t log2_of(std::uint64_t n) { return std::uint32_t(std::countr_zero(n)); }
}  // namespace

gfx_v11::gfx_v11(am_context& c) : c_(c), mqd_(c.boot_alloc(4096)) {}

void gfx_v11::wait_rlc_autoload() {
  ip_registers& gc = *c_.gc;
  c_.io.poll(gc.index("regCP_STAT"), 0xFFFFFFFF, 0, c_.opt.timeout, "CP idle after the RLC autoload", "CP_STAT");
  gc.poll("regRLC_RLCS_BOOTLOAD_STATUS", "BOOTLOAD_COMPLETE", 1, c_.opt.timeout, "RLC autoload");
}

void gfx_v11::select_queue(bool select) {
  c_.gc->write("regGRBM_GFX_CNTL", select ? c_.gc->table().encode("regGRBM_GFX_CNTL", {{"MEID", 1}}) : 0);
}

void gfx_v11::pulse_pipe_reset_and_enable() {
  ip_registers& gc = *c_.gc;
  gc.update("regCP_MEC_RS64_CNTL", {{"MEC_PIPE0_RESET", 1}});
  gc.update("regCP_MEC_RS64_CNTL", {{"MEC_PIPE0_RESET", 0}});
  gc.update("regCP_MEC_RS64_CNTL", {{"MEC_PIPE0_RESET", 0}, {"MEC_PIPE0_ACTIVE", 1}, {"MEC_HALT", 0}});
  std::this_thread::sleep_for(mec_settle);
}

// GC 12 only: PFP and ME pipe 0 pointed at their ucode start addresses (dwords), each taking it on
// a pipe reset pulse of CP_ME_CNTL. A compute-only driver never feeds the gfx ring, yet both
// references start these pipes on GC 12: Linux on every PSP-loaded boot (gfx_v12_0.c:
// gfx_v12_0_config_gfx_rs64, called from gfx_v12_0_hw_init), tinygrad in AM_GFX._config_mec, and
// nothing else points them at their entry; a CP without them is not known to take queues. On
// GC 11 tinygrad leaves them to the autoload, and so does tg.
void gfx_v11::start_gfx_pipes(const firmware_set& fw) {
  ip_registers& gc = *c_.gc;
  select_queue(false);  // ME 0 (gfx), pipe 0
  gc.write64("regCP_PFP_PRGRM_CNTR_START", "regCP_PFP_PRGRM_CNTR_START_HI", fw.pfp_start >> 2);
  gc.update("regCP_ME_CNTL", {{"PFP_PIPE0_RESET", 1}});
  gc.update("regCP_ME_CNTL", {{"PFP_PIPE0_RESET", 0}});
  gc.write64("regCP_ME_PRGRM_CNTR_START", "regCP_ME_PRGRM_CNTR_START_HI", fw.me_start >> 2);
  gc.update("regCP_ME_CNTL", {{"ME_PIPE0_RESET", 1}});
  gc.update("regCP_ME_CNTL", {{"ME_PIPE0_RESET", 0}});
}

// The GFX writes tinygrad's AM_GFX.init_hw makes on a full boot, each with its Linux counterpart:
// TCP_CNTL |= 0x20000000 (gfx_v11_0.c golden_settings_gc_11_0; tinygrad ORs it in on GC 12 too),
// RLC_CNTL = 1 (RLC_ENABLE_F32, as gfx_v11_0_rlc_start leaves it), RLC_SRM_CNTL SRM_ENABLE
// (gfx_v11_0_rlc_enable_srm; tinygrad also sets AUTO_INCR_ADDR) and RLC_SPM_MC_CNTL = 0xF.
void gfx_v11::init_gfx_registers() {
  ip_registers& gc = *c_.gc;
  gc.write("regTCP_CNTL", gc.read("regTCP_CNTL") | 0x20000000u);
  gc.write("regRLC_CNTL", 1);
  gc.update("regRLC_SRM_CNTL", {{"SRM_ENABLE", 1}, {"AUTO_INCR_ADDR", 1}});
  gc.write("regRLC_SPM_MC_CNTL", 0xF);
}

void gfx_v11::config_mec(const firmware_set& fw) {
  ip_registers& gc = *c_.gc;
  if (c_.disc.is_gfx12()) start_gfx_pipes(fw);
  // Pipe 0's program counter (dwords) through the GRBM selection of MEC1 pipe 0.
  select_queue(true);
  gc.write64("regCP_MEC_RS64_PRGRM_CNTR_START", "regCP_MEC_RS64_PRGRM_CNTR_START_HI", fw.mec_start >> 2);
  select_queue(false);
  init_gfx_registers();
  gc.update("regGRBM_CNTL", {{"READ_TIMEOUT", 0xFF}});
  // VMID 0's apertures: 64-bit addressing, unaligned access, the kernel's instruction prefetch.
  const queue::reg_table& t = gc.table();
  gc.write("regSH_MEM_CONFIG", t.encode("regSH_MEM_CONFIG", {{"ADDRESS_MODE", 0}, {"ALIGNMENT_MODE", 3},
                                                            {"INITIAL_INST_PREFETCH", 3}}));
  gc.write("regSH_MEM_BASES", 0x6000 | 0x6000 << 16);  // Linux gfx_v11_0.c DEFAULT_SH_MEM_BASES, both apertures
  gc.write("regCP_MEC_DOORBELL_RANGE_LOWER", 0);
  gc.write("regCP_MEC_DOORBELL_RANGE_UPPER", mec_doorbell_range_upper);
  nbio_gc_doorbell_init(c_);  // the CP's doorbell ports (gfx_v11_0_hw_init / gfx_v12_0_hw_init)
  pulse_pipe_reset_and_enable();
}

void gfx_v11::reset_mec() {
  stop_queue();
  if (c_.disc.is_gfx11()) {  // gfx12 relies on the pipe reset alone (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)
    c_.gc->write_fields("regGRBM_SOFT_RESET", {{"SOFT_RESET_CP", 1}, {"SOFT_RESET_CPC", 1}});
    std::this_thread::sleep_for(mec_settle);
    c_.gc->write("regGRBM_SOFT_RESET", 0);
  }
  nbio_gc_doorbell_init(c_);  // again: a card another driver left may lack them
  pulse_pipe_reset_and_enable();
}

void gfx_v11::start_queue(const compute_queue_setup& q) {
  if (!std::has_single_bit(q.ring_bytes) || q.ring_bytes < 256 || q.ring_va % 256 || q.eop_va % 256)
    throw usage_error(str(c_.name(), ": compute ring of ", q.ring_bytes, " bytes at VA ", hex{q.ring_va},
                          ": needs a power of two of at least 256 bytes and 256-byte aligned ring and EOP"));
  ip_registers& gc = *c_.gc;
  const queue::reg_table& t = gc.table();
  std::array<std::uint32_t, mqd_dwords> mqd{};
  mqd[0] = mqd_header;
  for (std::size_t i : static_thread_mgmt) mqd[i] = 0xFFFFFFFF;
  const std::uint64_t first = gc.index("regCP_MQD_BASE_ADDR");
  auto set = [&](std::string_view reg, std::uint32_t v) { mqd[mqd_register_image + (gc.index(reg) - first)] = v; };
  auto set64 = [&](std::string_view lo, std::string_view hi, std::uint64_t v) {
    set(lo, std::uint32_t(v));
    set(hi, std::uint32_t(v >> 32));
  };
  set64("regCP_MQD_BASE_ADDR", "regCP_MQD_BASE_ADDR_HI", c_.mc(mqd_));
  set("regCP_HQD_PIPE_PRIORITY", 2);
  set("regCP_HQD_QUEUE_PRIORITY", 0xF);
  set("regCP_HQD_QUANTUM", 0x111);
  set("regCP_HQD_PERSISTENT_STATE", t.encode("regCP_HQD_PERSISTENT_STATE", {{"PRELOAD_REQ", 1}, {"PRELOAD_SIZE", 0x55}}));
  set64("regCP_HQD_PQ_BASE", "regCP_HQD_PQ_BASE_HI", q.ring_va >> 8);
  set64("regCP_HQD_PQ_RPTR_REPORT_ADDR", "regCP_HQD_PQ_RPTR_REPORT_ADDR_HI", q.rptr_va);
  set64("regCP_HQD_PQ_WPTR_POLL_ADDR", "regCP_HQD_PQ_WPTR_POLL_ADDR_HI", q.wptr_va);
  set("regCP_HQD_PQ_DOORBELL_CONTROL", t.encode("regCP_HQD_PQ_DOORBELL_CONTROL",
                                                {{"DOORBELL_OFFSET", std::uint32_t(q.doorbell_offset / 4)}, {"DOORBELL_EN", 1}}));
  // QUEUE_SIZE = log2(ring dwords) - 1 (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
  set("regCP_HQD_PQ_CONTROL", t.encode("regCP_HQD_PQ_CONTROL", {{"QUEUE_SIZE", log2_of(q.ring_bytes / 4) - 1},
                                                                {"RPTR_BLOCK_SIZE", 5}}));
  set("regCP_HQD_IB_CONTROL", t.encode("regCP_HQD_IB_CONTROL", {{"MIN_IB_AVAIL_SIZE", 3}}));
  set("regCP_HQD_HQ_STATUS0", 0x20004000);
  set("regCP_MQD_CONTROL", t.encode("regCP_MQD_CONTROL", {{"PRIV_STATE", 1}}));
  set64("regCP_HQD_EOP_BASE_ADDR", "regCP_HQD_EOP_BASE_ADDR_HI", q.eop_va >> 8);
  set("regCP_HQD_EOP_CONTROL", t.encode("regCP_HQD_EOP_CONTROL", {{"EOP_SIZE", log2_of(q.eop_bytes / 4) - 1}}));
  c_.write_vram(mqd_, std::as_bytes(std::span(mqd)));

  // The register image into the HQD (active stays 0 in it), then activate (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
  select_queue(true);
  const std::uint64_t last = gc.index("regCP_HQD_PQ_WPTR_HI");
  for (std::uint64_t i = first; i <= last; ++i) c_.io.write(i, mqd[mqd_register_image + (i - first)]);
  gc.write("regCP_HQD_ACTIVE", 1);
  c_.io.flush_hdp();
  select_queue(false);
}

void gfx_v11::stop_queue() {
  ip_registers& gc = *c_.gc;
  select_queue(true);
  try {
    if (gc.read("regCP_HQD_ACTIVE") & 1) {
      gc.write("regCP_HQD_DEQUEUE_REQUEST", 2);
      gc.write("regSPI_COMPUTE_QUEUE_RESET", 1);
      gc.poll("regCP_HQD_ACTIVE", "ACTIVE", 0, c_.opt.timeout, "compute queue dequeue (MEC1 pipe 0 queue 0)");
    }
  } catch (...) {
    select_queue(false);
    throw;
  }
  select_queue(false);
}

}  // namespace tg::amd
