// gfx_v11.hpp: the graphics core of gfx11 / gfx12 as a compute-only driver needs it: the RLC
// autoload wait, MEC (RS64) configuration, and the PM4 compute queue on MEC1 pipe 0 queue 0
// through an MQD whose register image is copied into the HQD (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c, tinygrad/runtime/support/am/amdev.py: AMDev).
//
// One code path for both generations; registers and fields come by name from the generation's
// table (gc_11_0_0 / gc_12_0_0), where their positions differ. The MQD layout (v11_compute_mqd,
// v12_compute_mqd: identical in the words used here) puts CP_MQD_BASE_ADDR at dword 128 and the
// rest of the HQD block after it in register order, which is why the image is copied straight.
//
//   tg::amd::gfx_v11 gfx(ctx);
//   gfx.wait_rlc_autoload();
//   gfx.config_mec(&firmware);            // full boot; reset_mec() on a warm boot
//   gfx.start_queue({.ring = ring_va, .ring_bytes = 1 << 20, ...});
//   gfx.stop_queue();                     // dequeue (teardown, recovery)
//
// Not thread-safe.
#pragma once
#include <cstdint>

#include "drivers/amd/am_context.hpp"
#include "drivers/amd/am_firmware.hpp"

namespace tg::amd {

struct compute_queue_setup {
  std::uint64_t ring_va = 0, ring_bytes = 0;  // 256-byte aligned VA; a power of two of at least 256 bytes
  std::uint64_t rptr_va = 0, wptr_va = 0;     // read-pointer report, write-pointer poll words
  std::uint64_t eop_va = 0, eop_bytes = 4096;  // end-of-pipe buffer
  std::uint64_t doorbell_offset = 0x18;       // BAR2 bytes (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)
};

class gfx_v11 {
 public:
  explicit gfx_v11(am_context& c);

  // CP idle and RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE after the PSP's AUTOLOAD_RLC.
  void wait_rlc_autoload();
  // Full boot: (GC 12) PFP and ME program counters, MEC program counters from the firmware, pipe reset, CP/RLC/SH_MEM set-up, MEC
  // doorbell range, MEC enabled (tinygrad/runtime/support/am/amdev.py: AMDev).
  void config_mec(const firmware_set& fw);
  // Warm boot and recovery: dequeue, CP soft reset (gfx11), pipe reset, enable (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c). The
  // program counters kept their values: only a mode-1 reset clears registers.
  void reset_mec();

  void start_queue(const compute_queue_setup& q);
  // CP_HQD_DEQUEUE_REQUEST = 2 (reset waves) and SPI_COMPUTE_QUEUE_RESET, then waits for
  // CP_HQD_ACTIVE = 0 with the context's timeout (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
  void stop_queue();
  memory::gpu_pa mqd() const { return mqd_; }

 private:
  void select_queue(bool select);  // GRBM_GFX_CNTL: MEC1 pipe 0 queue 0, or back to 0
  void pulse_pipe_reset_and_enable();
  void start_gfx_pipes(const firmware_set& fw);  // GC 12: PFP / ME program counters
  void init_gfx_registers();                     // TCP_CNTL, RLC_CNTL, RLC_SRM_CNTL, RLC_SPM_MC_CNTL

  am_context& c_;
  memory::gpu_pa mqd_;
};

}  // namespace tg::amd
