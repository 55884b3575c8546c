// rlc_autoload.hpp: what the RLC autoload (the PSP's AUTOLOAD_RLC) needs loaded first on the
// emulated cards: every LOAD_IP_FW image their firmware files hold, as Linux lists them
// (amdgpu_ucode.h AMDGPU_UCODE_ID, psp_gfx_if.h GFX_FW_TYPE_*):
// - both: SMU, SDMA, RS64 PFP / ME / MEC ucode, MEC stack, IMU IRAM and DRAM, and the RLC parts
//   of the rlc_firmware_header_v2_x the emulator's gc_*_rlc.bin carries (amdgpu_rlc.c:
//   amdgpu_gfx_rlc_init_microcode_v2_1 / _v2_2 / _v2_3): restore lists SRM_CNTL, GPM_MEM,
//   SRM_MEM, RLC_IRAM, RLC_DRAM_BOOT, then RLC_G; gfx12's v2.3 adds RLC_P and RLC_V;
// - gfx11 (two gfx pipes): the PFP and ME stacks of pipes 0 and 1; gfx12: pipe 0's.
// The RLC parts must come in AMDGPU_UCODE_ID order, RLC_G last (psp_load_non_psp_fw loads them so).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "drivers/emu/personality.hpp"

namespace tg::emu {

// The GFX_FW_TYPE_* an autoload needs on `gen`.
std::vector<std::uint32_t> autoload_required(gfx_gen gen);
// Empty when `loaded` (fw types in load order) lets the autoload complete; else what is wrong.
std::string autoload_problem(gfx_gen gen, const std::vector<std::uint32_t>& loaded);

}  // namespace tg::emu
