// gpu_boot.cpp: the emulated GPU's side of a driver's bring-up (tinygrad/runtime/support/am/amdev.py: AMDev): the firmware blocks
// (PSP, SMU), the IH ring, the GFX bits a boot polls, the discovery table, and the mode-1 reset
// (see gpu.hpp).
#include "drivers/emu/discovery_table.hpp"
#include "drivers/emu/gpu.hpp"
#include "drivers/emu/gpu_lock.hpp"

namespace tg::emu {

void gpu::install_boot_behaviours() {
  register_file& regs = core_->regs;
  psp_->install();
  smu_->install();
  ih_->install();
  // GRBM_SOFT_RESET: the driver pulses reset bits and writes 0 again (tinygrad/runtime/support/am/amdev.py: AMDev); the
  // blocks come out of reset at once, so the register reads 0 whatever was written.
  regs.set_behaviour(core_->chip.gc_reg.grbm_soft_reset, {.on_read = [](std::uint32_t) { return 0u; }});
  // SCRATCH_REG6/7 need nothing: plain registers, 0 at power-on (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
  install_cp_start();
}

// GC 12's CP runs no queue until PFP and ME pipe 0 took their ucode start addresses: a write of
// CP_*_PRGRM_CNTR_START(_HI), then a pulse of the pipe's reset bit in CP_ME_CNTL (gfx_v12_0.c:
// gfx_v12_0_config_gfx_rs64; tinygrad's AM_GFX._config_mec). A mode-1 reset forgets them.
void gpu::install_cp_start() {
  pfp_started_ = me_started_ = false;
  cp_me_cntl_before_ = 0;
  if (core_->chip.gen != gfx_gen::gfx12) return;
  const gc_registers& r = core_->chip.gc_reg;
  core_->regs.set_behaviour(r.cp_me_cntl, {.on_write = [this, r](std::uint32_t v) {
                              const register_fields& f = core_->chip.field;
                              const register_file& regs = core_->regs;
                              auto released = [&](const reg_field& bit) {
                                return bit.get(cp_me_cntl_before_) && !bit.get(v);
                              };
                              if (released(f.pfp_pipe0_reset))
                                pfp_started_ = (regs.peek(r.cp_pfp_start) | regs.peek(r.cp_pfp_start_hi)) != 0;
                              if (released(f.me_pipe0_reset))
                                me_started_ = (regs.peek(r.cp_me_start) | regs.peek(r.cp_me_start_hi)) != 0;
                              cp_me_cntl_before_ = v;
                            }});
}

void gpu::write_discovery_table() {
  if (config_.vram_bytes < discovery_offset_from_end) return;  // too small a VRAM to hold one
  core_->memory.write(discovery_table_offset(), build_discovery_table(core_->chip));
}

gpu_pa gpu::discovery_table_offset() const { return {config_.vram_bytes - discovery_offset_from_end}; }

void gpu::settle() {
  if (smu_->reset_requested()) reset_locked();
}

void gpu::reset_locked() {
  smu_->clear_reset_request();
  for (auto& [bank, q] : compute_) retired_.push_back(std::move(q));
  compute_.clear();
  if (sdma_) retired_.push_back(std::move(sdma_));
  core_->regs.clear();
  core_->gmmu.invalidate();
  core_->icache.invalidate();
  mm_sem_held_ = gc_sem_held_ = false;
  install_register_behaviours();  // power-on values; the PSP and SMU forget their state
  write_discovery_table();
  ++mode1_resets_;
  back_from_reset_ = std::chrono::steady_clock::now() + config_.mode1_reset_latency;
}

void gpu::mode1_reset() {
  lock l(*this);
  reset_locked();
  retired_.clear();
}

std::uint64_t gpu::mode1_resets() const {
  lock l(*this);
  return mode1_resets_;
}

std::vector<psp_command> gpu::psp_log() const {
  lock l(*this);
  return psp_->log();
}

psp_status gpu::psp() const {
  lock l(*this);
  return psp_->status();
}

void gpu::set_psp_faults(const psp_faults& faults) {
  lock l(*this);
  psp_->faults = faults;
}

std::vector<smu_message> gpu::smu_log() const {
  lock l(*this);
  return smu_->log();
}

smu_status gpu::smu() const {
  lock l(*this);
  return smu_->status();
}

void gpu::set_smu_silent(bool silent) {
  lock l(*this);
  smu_->silent = silent;
}

ih_stats gpu::ih() const {
  lock l(*this);
  return ih_->stats();
}

}  // namespace tg::emu
