// am_firmware_images.cpp: the LOAD_IP_FW images of each firmware file, by header version
// (amdgpu_ucode.h), and load_firmware, which reads the whole set (see am_firmware.hpp).
#include <cstring>
#include <initializer_list>

#include <tg/core/error.hpp>

#include "drivers/amd/am_firmware.hpp"

namespace tg::amd {

namespace {

// A u32 header field after the 32-byte common header, checked against the header's size.
std::uint32_t field(const firmware_file& f, std::size_t at, const char* name) {
  if (at + 4 > f.header.header_size_bytes || at + 4 > f.bytes.size())
    throw usage_error(str("firmware ", f.path.string(), ": header field ", name, " at byte ", at,
                          " lies beyond header_size_bytes = ", f.header.header_size_bytes));
  std::uint32_t v;
  std::memcpy(&v, f.bytes.data() + at, 4);
  return v;
}

ip_firmware image(const firmware_file& f, std::uint32_t type, std::uint64_t offset, std::uint64_t size,
                  const char* field_name, std::size_t field_at, const char* part) {
  if (offset > f.bytes.size() || size > f.bytes.size() - offset || size == 0)
    throw usage_error(str("firmware ", f.path.string(), ": ", field_name, " (header byte ", field_at,
                          ") gives [", offset, ", ", offset + size, "), not a non-empty range of the ",
                          f.bytes.size(), "-byte file"));
  ip_firmware out{type, str(f.path.filename().string(), " ", part), {}};
  out.bytes.assign(f.bytes.begin() + std::ptrdiff_t(offset), f.bytes.begin() + std::ptrdiff_t(offset + size));
  return out;
}

// The ucode array of the common header: SMU, RLC_G.
ip_firmware common_image(const firmware_file& f, std::uint32_t type) {
  return image(f, type, f.header.ucode_array_offset_bytes, f.header.ucode_size_bytes, "ucode_array_offset_bytes", 24,
               "ucode");
}

void add_sdma(const firmware_file& f, firmware_set& s) {
  if (f.header.header_version_major == 2) {  // sdma v2.0: context thread, then control thread
    s.ip.push_back(image(f, gfx_fw_type::sdma_th0, f.header.ucode_array_offset_bytes, field(f, 36, "ctx_ucode_size_bytes"),
                         "ctx_ucode_size_bytes", 36, "ctx ucode"));
    s.ip.push_back(image(f, gfx_fw_type::sdma_th1, field(f, 48, "ctl_ucode_offset"), field(f, 52, "ctl_ucode_size_bytes"),
                         "ctl_ucode_offset", 48, "ctl ucode"));
  } else if (f.header.header_version_major == 3) {  // sdma v3.0 (SDMA 7): one RS64 image, loaded as TH0
    s.ip.push_back(image(f, gfx_fw_type::sdma_th0, field(f, 36, "ucode_offset_bytes"), field(f, 40, "ucode_size_bytes"),
                         "ucode_offset_bytes", 36, "ucode"));
  } else {
    throw usage_error(str("firmware ", f.path.string(), ": header_version_major ", f.header.header_version_major,
                          " at byte 8; SDMA 6/7 files use 2 or 3"));
  }
}

// gfx v2.0 (RS64 CP engines): the ucode image, the data (stack) image once per pipe stack type
// (amdgpu_ucode.c: amdgpu_ucode_init_single_fw gives every *_P<n>_STACK the same data image),
// and the program start address.
std::uint64_t add_rs64(const firmware_file& f, firmware_set& s, std::uint32_t ucode_type,
                       std::initializer_list<std::uint32_t> stack_types) {
  if (f.header.header_version_major != 2)
    throw usage_error(str("firmware ", f.path.string(), ": header_version_major ", f.header.header_version_major,
                          " at byte 8; gfx11/gfx12 CP files are RS64 (version 2)"));
  s.ip.push_back(image(f, ucode_type, field(f, 40, "ucode_offset_bytes"), field(f, 36, "ucode_size_bytes"),
                       "ucode_offset_bytes", 40, "ucode"));
  for (std::uint32_t stack : stack_types) {
    const char* part = stack == *stack_types.begin() ? "stack" : "stack p1";
    s.ip.push_back(image(f, stack, field(f, 48, "data_offset_bytes"), field(f, 44, "data_size_bytes"),
                         "data_offset_bytes", 48, part));
  }
  return std::uint64_t{field(f, 56, "ucode_start_addr_hi")} << 32 | field(f, 52, "ucode_start_addr_lo");
}

// imu v1.0: IRAM at the common header's ucode array, DRAM right after it, sized by
// imu_iram_ucode_size_bytes (32) and imu_dram_ucode_size_bytes (40): amdgpu_ucode.c:
// amdgpu_ucode_init_single_fw (IMU_I / IMU_D), loaded by imu_v11_0.c / imu_v12_0.c and tinygrad's
// AMFirmware the same way. The imu_*_ucode_offset_bytes fields are not where the images are.
void add_imu(const firmware_file& f, firmware_set& s) {
  const std::uint64_t iram_at = f.header.ucode_array_offset_bytes;
  const std::uint64_t iram_size = field(f, 32, "imu_iram_ucode_size_bytes");
  s.ip.push_back(image(f, gfx_fw_type::imu_i, iram_at, iram_size, "imu_iram_ucode_size_bytes", 32, "iram"));
  s.ip.push_back(image(f, gfx_fw_type::imu_d, iram_at + iram_size, field(f, 40, "imu_dram_ucode_size_bytes"),
                       "imu_dram_ucode_size_bytes", 40, "dram"));
}

// rlc v2.x (amdgpu_ucode.h rlc_firmware_header_v2_1/_2/_3; amdgpu_rlc.c:
// amdgpu_gfx_rlc_init_microcode_v2_1/_v2_2/_v2_3): each part a {size, offset from the file start}
// pair in the header, loaded when its size is not 0, in AMDGPU_UCODE_ID order; RLC_G (the common
// ucode array) last.
struct rlc_part {
  std::uint32_t fw_type;
  std::size_t size_at, offset_at;
  std::uint16_t since_minor;
  const char* size_field;
  const char* offset_field;
  const char* name;  // for messages
};
constexpr rlc_part rlc_parts[] = {
    {gfx_fw_type::rlc_restore_list_srm_cntl, 116, 120, 1, "save_restore_list_cntl_size_bytes",
     "save_restore_list_cntl_offset_bytes", "restore list cntl"},
    {gfx_fw_type::rlc_restore_list_gpm_mem, 132, 136, 1, "save_restore_list_gpm_size_bytes",
     "save_restore_list_gpm_offset_bytes", "restore list gpm"},
    {gfx_fw_type::rlc_restore_list_srm_mem, 148, 152, 1, "save_restore_list_srm_size_bytes",
     "save_restore_list_srm_offset_bytes", "restore list srm"},
    {gfx_fw_type::rlc_iram, 156, 160, 2, "rlc_iram_ucode_size_bytes", "rlc_iram_ucode_offset_bytes", "iram"},
    {gfx_fw_type::rlc_dram_boot, 164, 168, 2, "rlc_dram_ucode_size_bytes", "rlc_dram_ucode_offset_bytes", "dram"},
    {gfx_fw_type::rlc_p, 172, 176, 3, "rlcp_ucode_size_bytes", "rlcp_ucode_offset_bytes", "rlc_p"},
    {gfx_fw_type::rlc_v, 180, 184, 3, "rlcv_ucode_size_bytes", "rlcv_ucode_offset_bytes", "rlc_v"},
};

void add_rlc(const firmware_file& f, firmware_set& s) {
  if (f.header.header_version_major != 2)
    throw usage_error(str("firmware ", f.path.string(), ": header_version_major ", f.header.header_version_major,
                          " at byte 8; gfx11/gfx12 RLC files are version 2"));
  for (const rlc_part& p : rlc_parts) {
    if (f.header.header_version_minor < p.since_minor) continue;
    if (const std::uint32_t size = field(f, p.size_at, p.size_field); size != 0)
      s.ip.push_back(image(f, p.fw_type, field(f, p.offset_at, p.offset_field), size, p.offset_field, p.offset_at,
                           p.name));
  }
  s.ip.push_back(common_image(f, gfx_fw_type::rlc_g));
}

}  // namespace

firmware_set load_firmware(const std::filesystem::path& dir, const firmware_versions& v) {
  firmware_set s;
  const std::string gc = "gc_" + v.gc.file_tag();
  s.psp = parse_psp_sos(read_firmware_file(dir, "psp_" + v.mp0.file_tag() + "_sos.bin"));
  s.ip.push_back(common_image(read_firmware_file(dir, "smu_" + v.mp1.file_tag() + ".bin"), gfx_fw_type::smu));
  add_sdma(read_firmware_file(dir, "sdma_" + v.sdma0.file_tag() + ".bin"), s);
  // PFP and ME images go through the PSP on both generations; their start addresses are used on
  // GC 12 only (gfx_v11::start_gfx_pipes, after gfx_v12_0.c: gfx_v12_0_config_gfx_rs64).
  // GC 11 has two gfx pipes, GC 12 one (gfx_v11_0.c / gfx_v12_0.c: num_pipe_per_me), and Linux
  // loads a PFP / ME stack per pipe.
  const bool two_pipes = v.gc.major == 11;
  using namespace gfx_fw_type;
  s.pfp_start = add_rs64(read_firmware_file(dir, gc + "_pfp.bin"), s, rs64_pfp,
                         two_pipes ? std::initializer_list<std::uint32_t>{rs64_pfp_stack, rs64_pfp_p1_stack}
                                   : std::initializer_list<std::uint32_t>{rs64_pfp_stack});
  s.me_start = add_rs64(read_firmware_file(dir, gc + "_me.bin"), s, rs64_me,
                        two_pipes ? std::initializer_list<std::uint32_t>{rs64_me_stack, rs64_me_p1_stack}
                                  : std::initializer_list<std::uint32_t>{rs64_me_stack});
  s.mec_start = add_rs64(read_firmware_file(dir, gc + "_mec.bin"), s, rs64_mec, {rs64_mec_stack});
  add_imu(read_firmware_file(dir, gc + "_imu.bin"), s);
  add_rlc(read_firmware_file(dir, gc + "_rlc.bin"), s);
  return s;
}

}  // namespace tg::amd
