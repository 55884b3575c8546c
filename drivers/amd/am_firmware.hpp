// am_firmware.hpp: the firmware files an AM boot needs, read and split by their amdgpu headers.
//
// Files live in a folder (default /lib/firmware/amdgpu, Debian's firmware-amd-graphics) as
// name.bin or name.bin.zst (zstd, as Debian ships them). Names follow tinygrad/runtime/support/am/amdev.py: AMDev with IP
// versions from discovery: psp_<MP0>_sos, smu_<MP1>, sdma_<SDMA0>, gc_<GC>_{pfp,me,mec,imu,rlc}.
// Layouts: Linux amdgpu_ucode.h (common_firmware_header, psp v1/v2 with bin descriptors, gfx v2,
// rlc v2.0-v2.3, sdma v2/v3, imu v1). What comes out is what the PSP loads: the bootloader components of
// the SOS file, and one LOAD_IP_FW image per GFX_FW_TYPE (psp_gfx_if.h), plus the RS64 program
// start addresses the MEC is pointed at.
//
//   tg::amd::firmware_set fw = tg::amd::load_firmware("/lib/firmware/amdgpu", versions);
//
// Errors: a missing file is a device_error naming every path tried and the Debian package; a
// corrupt header a usage_error naming the file, the field and its byte offset. Thread-safe (pure).
#pragma once
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "drivers/amd/am_discovery.hpp"

namespace tg::amd {

inline const std::filesystem::path default_firmware_dir = "/lib/firmware/amdgpu";

// common_firmware_header (32 bytes at the start of every file).
struct firmware_header {
  std::uint32_t size_bytes = 0, header_size_bytes = 0;
  std::uint16_t header_version_major = 0, header_version_minor = 0, ip_version_major = 0, ip_version_minor = 0;
  std::uint32_t ucode_version = 0, ucode_size_bytes = 0, ucode_array_offset_bytes = 0, crc32 = 0;
};

struct firmware_file {
  std::filesystem::path path;  // the one that was read
  std::vector<std::byte> bytes;  // decompressed
  firmware_header header;
};

// psp_fw_type of a bootloader component (amdgpu_ucode.h enum psp_fw_type).
enum class psp_component_type : std::uint32_t {
  sos = 1, sys_drv = 2, kdb = 3, toc = 4, spl = 5, rl = 6, soc_drv = 7, intf_drv = 8, dbg_drv = 9, ras_drv = 10,
  ipkeymgr_drv = 11,
};

struct psp_component {
  psp_component_type type;
  std::uint32_t version = 0;
  std::vector<std::byte> bytes;
};

// GFX_FW_TYPE_* of LOAD_IP_FW (psp_gfx_if.h).
namespace gfx_fw_type {
inline constexpr std::uint32_t rlc_v = 7, rlc_g = 8, smu = 18, rlc_restore_list_gpm_mem = 20,
                               rlc_restore_list_srm_mem = 21, rlc_restore_list_srm_cntl = 22, rlc_p = 25,
                               rlc_iram = 26, rlc_dram_boot = 48, imu_i = 68, imu_d = 69, sdma_th0 = 71,
                               sdma_th1 = 72, rs64_pfp = 87, rs64_me = 88, rs64_mec = 89, rs64_pfp_stack = 90,
                               rs64_pfp_p1_stack = 91, rs64_me_stack = 92, rs64_me_p1_stack = 93,
                               rs64_mec_stack = 94;
}  // namespace gfx_fw_type

struct ip_firmware {
  std::uint32_t fw_type = 0;
  std::string what;  // "gc_11_0_0_mec.bin ucode", for messages
  std::vector<std::byte> bytes;
};

struct firmware_versions {
  ip_version mp0, mp1, sdma0, gc;
};
firmware_versions firmware_versions_of(const discovery& d);

struct firmware_set {
  std::vector<psp_component> psp;    // bootloader components and the TOC, in file order
  // LOAD_IP_FW images: SMU first, then SDMA, CP (gfx11: PFP / ME stacks for pipes 0 and 1, as
  // amdgpu_gfx.c: amdgpu_gfx_cp_init_microcode lists them), IMU, and the RLC parts in
  // amdgpu_ucode.h AMDGPU_UCODE_ID order (restore lists, IRAM, DRAM, RLC_P, RLC_V, RLC_G).
  std::vector<ip_firmware> ip;
  std::uint64_t pfp_start = 0, me_start = 0, mec_start = 0;  // RS64 ucode start addresses (bytes)

  const psp_component* find(psp_component_type t) const;
};

// Reads `name` (".bin") or `name` + ".zst" from `dir`.
firmware_file read_firmware_file(const std::filesystem::path& dir, const std::string& name);
// Checks the common header of `bytes` (the file `what`) against its size.
firmware_header parse_firmware_header(std::span<const std::byte> bytes, const std::string& what);

// The PSP components of a psp_<MP0>_sos file.
std::vector<psp_component> parse_psp_sos(const firmware_file& f);
// Everything a boot needs for these IP versions.
firmware_set load_firmware(const std::filesystem::path& dir, const firmware_versions& v);

}  // namespace tg::amd
