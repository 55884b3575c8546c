// psp_model.hpp: the emulated PSP (MP0), as the driver meets it through the C2PMSG mailbox
// registers during a full boot (tinygrad's mock GPU (test/mockgpu/amd); Linux amdgpu_psp.c, psp_v13_0.c).
//
// - Bootloader: C2PMSG_35 reads bit 31 (ready). A write of a PSP_BL__LOAD_* id to 35 loads a
//   component (C2PMSG_36 holds the msg1 buffer address >> 20, recorded, not read); after
//   LOAD_SOSDRV the secure OS is alive: C2PMSG_81 reads non-zero and C2PMSG_64 bit 31 is set.
// - KM ring: C2PMSG_64 = ring type (2) << 16 creates the ring at the MC address in 69/70 with the
//   byte size in 71; DESTROY_RINGS (0x30000) removes it. Either answers 0x80000000 in 64 (status 0
//   in bits 15:0), which only the alive sOS does.
// - Submit: a write to C2PMSG_67 (the write pointer, dwords) runs every 64-byte frame from the old
//   pointer to the new one: the frame (psp_gfx_if.h struct psp_gfx_rb_frame) names the 1024-byte
//   command buffer and a fence; the model logs the command (cmd_id at +8; fw_type at +40 for
//   LOAD_IP_FW), writes status 0 at +864 (LOAD_TOC also a TMR size at +880) and then the fence
//   value (32 bits) at the fence address. C2PMSG_67 reads back the write pointer.
// AUTOLOAD_RLC sets RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE (0 at power-on) only when every
// part rlc_autoload.hpp lists was loaded, the RLC parts in AMDGPU_UCODE_ID order.
// SETUP_TMR on MP0 13.0.x must carry virt_phy_addr and system_phy_addr = the TMR's VRAM address
// (amdgpu_psp.c: psp_prep_tmr_cmd_buf); without them it fails with TEE_ERROR_BAD_PARAMETERS.
// MC addresses become VRAM offsets through the FB base (gpu_core::mc_to_vram); a frame naming
// anything outside VRAM is logged as a problem and never fenced.
//
// Fault injection: a silent bootloader (never ready, sOS never alive), a silent ring (commands are
// taken but never fenced), or a failing status in every response.
//
// Not thread-safe: the gpu calls it under its lock.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "drivers/emu/gpu_core.hpp"

namespace tg::emu {

struct psp_command {
  enum class channel : std::uint8_t { bootloader, ring };
  channel via;
  std::uint32_t id = 0;       // bootloader: the PSP_BL__ id; ring: the GFX_CMD_ID
  std::uint32_t fw_type = 0;  // ring LOAD_IP_FW: the psp_gfx_fw_type
  std::string problem;        // non-empty when the PSP could not carry it out
};

struct psp_faults {
  bool bootloader_silent = false;  // C2PMSG_35 never reads ready; sOS never comes alive
  bool ring_silent = false;        // ring commands are never answered (no status, no fence)
  std::uint32_t command_status = 0;  // non-zero: every ring command fails with this status
};

struct psp_status {
  bool sos_alive = false;
  std::optional<std::uint64_t> ring_mc;  // the KM ring, when created
  std::uint32_t ring_bytes = 0, wptr = 0;
  std::uint64_t fences = 0;  // frames answered
};

class psp_model {
 public:
  explicit psp_model(gpu_core& core) : core_(core) {}

  void install();  // behaviours on the C2PMSG registers, power-on values
  void reset();    // back to power-on: bootloader ready, sOS not alive, no ring (log kept)

  psp_status status() const { return status_; }
  const std::vector<psp_command>& log() const { return log_; }
  psp_faults faults;

 private:
  void on_bootloader(std::uint32_t command);
  void on_ring_control(std::uint32_t command);
  void on_wptr(std::uint32_t wptr);
  void run_frame(std::uint32_t wptr_dwords);
  psp_command execute(std::uint64_t cmd_mc, std::uint32_t fence_value, std::uint64_t fence_mc);
  std::string check_setup_tmr(gpu_pa cmd) const;  // empty when MP0 takes it
  void autoload(psp_command& c);                  // AUTOLOAD_RLC

  gpu_core& core_;
  psp_status status_;
  std::vector<psp_command> log_;
  std::vector<std::uint32_t> loaded_;  // LOAD_IP_FW fw types since power-on, in order
};

}  // namespace tg::emu
