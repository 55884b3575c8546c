// am_firmware_images.cpp: the LOAD_IP_FW images of each firmware file, by header version
// (amdgpu_ucode.h), and load_firmware, which reads the whole set (see am_firmware.hpp).
#include <cstring>

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

// The ucode array of the common header: SMU, RLC.
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

// gfx v2.0 (RS64 CP engines): ucode and data (stack) images and the program start address.
std::uint64_t add_rs64(const firmware_file& f, firmware_set& s, std::uint32_t ucode_type, std::uint32_t stack_type) {
  if (f.header.header_version_major != 2)
    throw usage_error(str("firmware ", f.path.string(), ": header_version_major ", f.header.header_version_major,
                          " at byte 8; gfx11/gfx12 CP files are RS64 (version 2)"));
  s.ip.push_back(image(f, ucode_type, field(f, 40, "ucode_offset_bytes"), field(f, 36, "ucode_size_bytes"),
                       "ucode_offset_bytes", 40, "ucode"));
  s.ip.push_back(image(f, stack_type, field(f, 48, "data_offset_bytes"), field(f, 44, "data_size_bytes"),
                       "data_offset_bytes", 48, "stack"));
  return std::uint64_t{field(f, 56, "ucode_start_addr_hi")} << 32 | field(f, 52, "ucode_start_addr_lo");
}

void add_imu(const firmware_file& f, firmware_set& s) {
  s.ip.push_back(image(f, gfx_fw_type::imu_i, field(f, 36, "imu_iram_ucode_offset_bytes"),
                       field(f, 32, "imu_iram_ucode_size_bytes"), "imu_iram_ucode_offset_bytes", 36, "iram"));
  s.ip.push_back(image(f, gfx_fw_type::imu_d, field(f, 44, "imu_dram_ucode_offset_bytes"),
                       field(f, 40, "imu_dram_ucode_size_bytes"), "imu_dram_ucode_offset_bytes", 44, "dram"));
}

}  // namespace

firmware_set load_firmware(const std::filesystem::path& dir, const firmware_versions& v) {
  firmware_set s;
  const std::string gc = "gc_" + v.gc.file_tag();
  s.psp = parse_psp_sos(read_firmware_file(dir, "psp_" + v.mp0.file_tag() + "_sos.bin"));
  s.ip.push_back(common_image(read_firmware_file(dir, "smu_" + v.mp1.file_tag() + ".bin"), gfx_fw_type::smu));
  add_sdma(read_firmware_file(dir, "sdma_" + v.sdma0.file_tag() + ".bin"), s);
  // gfx11 boots PFP and ME from the RLC autoload too; gfx12 also points them at their start
  // addresses (tinygrad/runtime/support/am/amdev.py: AMDev and 6, tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
  s.pfp_start = add_rs64(read_firmware_file(dir, gc + "_pfp.bin"), s, gfx_fw_type::rs64_pfp, gfx_fw_type::rs64_pfp_stack);
  s.me_start = add_rs64(read_firmware_file(dir, gc + "_me.bin"), s, gfx_fw_type::rs64_me, gfx_fw_type::rs64_me_stack);
  s.mec_start = add_rs64(read_firmware_file(dir, gc + "_mec.bin"), s, gfx_fw_type::rs64_mec, gfx_fw_type::rs64_mec_stack);
  add_imu(read_firmware_file(dir, gc + "_imu.bin"), s);
  s.ip.push_back(common_image(read_firmware_file(dir, gc + "_rlc.bin"), gfx_fw_type::rlc_g));
  return s;
}

}  // namespace tg::amd
