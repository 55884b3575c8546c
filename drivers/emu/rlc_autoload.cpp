// rlc_autoload.cpp: the parts an RLC autoload needs (see rlc_autoload.hpp).
#include "drivers/emu/rlc_autoload.hpp"

#include <algorithm>

#include <tg/core/error.hpp>

namespace tg::emu {

namespace {

// psp_gfx_if.h enum psp_gfx_fw_type.
constexpr std::uint32_t rlc_v = 7, rlc_g = 8, smu = 18, gpm_mem = 20, srm_mem = 21, srm_cntl = 22, rlc_p = 25,
                        rlc_iram = 26, rlc_dram_boot = 48, imu_i = 68, imu_d = 69, sdma_th0 = 71, sdma_th1 = 72,
                        rs64_pfp = 87, rs64_me = 88, rs64_mec = 89, pfp_p0 = 90, pfp_p1 = 91, me_p0 = 92, me_p1 = 93,
                        mec_p0 = 94;

// AMDGPU_UCODE_ID order of the RLC parts.
constexpr std::uint32_t rlc_order[] = {srm_cntl, gpm_mem, srm_mem, rlc_iram, rlc_dram_boot, rlc_p, rlc_v, rlc_g};

const char* name_of(std::uint32_t t) {
  switch (t) {
    case rlc_v: return "RLC_V";
    case rlc_g: return "RLC_G";
    case smu: return "SMU";
    case gpm_mem: return "RLC_RESTORE_LIST_GPM_MEM";
    case srm_mem: return "RLC_RESTORE_LIST_SRM_MEM";
    case srm_cntl: return "RLC_RESTORE_LIST_SRM_CNTL";
    case rlc_p: return "RLC_P";
    case rlc_iram: return "RLC_IRAM";
    case rlc_dram_boot: return "RLC_DRAM_BOOT";
    case imu_i: return "IMU_I";
    case imu_d: return "IMU_D";
    case sdma_th0: return "SDMA_UCODE_TH0";
    case sdma_th1: return "SDMA_UCODE_TH1";
    case rs64_pfp: return "RS64_PFP";
    case rs64_me: return "RS64_ME";
    case rs64_mec: return "RS64_MEC";
    case pfp_p0: return "RS64_PFP_P0_STACK";
    case pfp_p1: return "RS64_PFP_P1_STACK";
    case me_p0: return "RS64_ME_P0_STACK";
    case me_p1: return "RS64_ME_P1_STACK";
    case mec_p0: return "RS64_MEC_P0_STACK";
    default: return "?";
  }
}

}  // namespace

std::vector<std::uint32_t> autoload_required(gfx_gen gen) {
  std::vector<std::uint32_t> r = {smu,    sdma_th0, rs64_pfp, rs64_me,  rs64_mec, pfp_p0,        me_p0,
                                  mec_p0, imu_i,    imu_d,    srm_cntl, gpm_mem,  srm_mem,       rlc_iram,
                                  rlc_dram_boot, rlc_g};
  if (gen == gfx_gen::gfx11) r.insert(r.end(), {sdma_th1, pfp_p1, me_p1});  // SDMA 6's second thread; two gfx pipes
  else r.insert(r.end(), {rlc_p, rlc_v});                                   // rlc v2.3
  return r;
}

std::string autoload_problem(gfx_gen gen, const std::vector<std::uint32_t>& loaded) {
  std::string missing;
  for (std::uint32_t t : autoload_required(gen))
    if (std::find(loaded.begin(), loaded.end(), t) == loaded.end())
      missing += str(missing.empty() ? "" : ", ", name_of(t), " (", t, ")");
  if (!missing.empty()) return "AUTOLOAD_RLC before every part was loaded; missing " + missing;
  std::size_t last = 0;  // the rank in rlc_order of the last RLC part seen
  for (std::uint32_t t : loaded) {
    const auto* at = std::find(std::begin(rlc_order), std::end(rlc_order), t);
    if (at == std::end(rlc_order)) continue;
    const std::size_t rank = std::size_t(at - std::begin(rlc_order));
    if (rank < last)
      return str("RLC part ", name_of(t), " loaded after ", name_of(rlc_order[last]),
                 "; amdgpu_ucode.h AMDGPU_UCODE_ID order puts it first");
    last = rank;
  }
  return {};
}

}  // namespace tg::emu
