// am_firmware_test.cpp: firmware files from the emulator's independent writer, parsed by the driver.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

#include <tg/core/error.hpp>
#include <tg/log.hpp>

#include "drivers/amd/am_firmware.hpp"
#include "drivers/emu/firmware/emu_firmware.hpp"

using namespace tg::amd;
namespace fs = std::filesystem;

namespace {

struct temp_dir {
  fs::path path;
  temp_dir() {
    char tmpl[] = "/tmp/tg_am_fw_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~temp_dir() { fs::remove_all(path); }
};

const firmware_versions gfx11{{13, 0, 0}, {13, 0, 0}, {6, 0, 0}, {11, 0, 0}};
const firmware_versions gfx12{{14, 0, 2}, {14, 0, 2}, {7, 0, 0}, {12, 0, 0}};

std::size_t count_type(const firmware_set& s, std::uint32_t type) {
  std::size_t n = 0;
  for (const ip_firmware& f : s.ip) n += f.fw_type == type;
  return n;
}

std::vector<std::uint32_t> types_of(const firmware_set& s) {
  std::vector<std::uint32_t> out;
  for (const ip_firmware& f : s.ip) out.push_back(f.fw_type);
  return out;
}

const ip_firmware& image_of(const firmware_set& s, std::uint32_t type) {
  for (const ip_firmware& f : s.ip)
    if (f.fw_type == type) return f;
  FAIL("no image of type " << type);
  throw 0;
}

std::uint32_t u32_at(const std::vector<std::byte>& b, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

// [at, at + size) of a file.
std::vector<std::byte> slice(const std::vector<std::byte>& b, std::size_t at, std::size_t size) {
  return {b.begin() + std::ptrdiff_t(at), b.begin() + std::ptrdiff_t(at + size)};
}

}  // namespace

TEST_CASE("a gfx11 firmware folder splits into PSP components and LOAD_IP_FW images") {
  temp_dir dir;
  tg::emu::write_firmware_images(dir.path, tg::memory::gfx_gen::gfx11, 7);
  const firmware_set s = load_firmware(dir.path, gfx11);
  // KDB, SYS, SOC, INTF, DBG, RAS, SOS, TOC; no SPL before MP0 14.
  CHECK(s.psp.size() == 8);
  REQUIRE(s.find(psp_component_type::sos) != nullptr);
  CHECK(s.find(psp_component_type::spl) == nullptr);
  CHECK(s.find(psp_component_type::kdb)->bytes.size() % 256 == 0);
  CHECK(s.ip.front().fw_type == gfx_fw_type::smu);
  CHECK(count_type(s, gfx_fw_type::sdma_th0) == 1);
  CHECK(count_type(s, gfx_fw_type::sdma_th1) == 1);  // SDMA 6: v2.0, two threads
  CHECK(count_type(s, gfx_fw_type::rs64_mec) == 1);
  CHECK(count_type(s, gfx_fw_type::rs64_mec_stack) == 1);
  CHECK(count_type(s, gfx_fw_type::imu_i) == 1);
  CHECK(count_type(s, gfx_fw_type::rlc_g) == 1);
  CHECK(s.mec_start == 0x3800);  // as the writer put it at gfx v2.0 byte 52
  CHECK(s.pfp_start == 0x3000);
}

TEST_CASE("gfx12 firmware: SPL component, SDMA v3 single image, zstd-compressed files") {
  temp_dir dir;
  tg::emu::write_firmware_images(dir.path, tg::memory::gfx_gen::gfx12, 9, {.compress = true});
  CHECK(fs::exists(dir.path / "psp_14_0_2_sos.bin.zst"));
  const firmware_set s = load_firmware(dir.path, gfx12);
  CHECK(s.find(psp_component_type::spl) != nullptr);
  CHECK(count_type(s, gfx_fw_type::sdma_th0) == 1);
  CHECK(count_type(s, gfx_fw_type::sdma_th1) == 0);
}

TEST_CASE("a missing file names both paths tried and the Debian package") {
  temp_dir dir;
  const std::string expected = "firmware: neither " + (dir.path / "smu_13_0_0.bin").string() + " nor " +
                               (dir.path / "smu_13_0_0.bin.zst").string() +
                               " exists; install Debian's firmware-amd-graphics (non-free-firmware) or point the "
                               "firmware_dir option at a folder that has it";
  CHECK_THROWS_WITH_AS(read_firmware_file(dir.path, "smu_13_0_0.bin"), expected.c_str(), tg::device_error);
}

TEST_CASE("a corrupt header is a usage error naming file, field and offset") {
  temp_dir dir;
  tg::emu::write_firmware_images(dir.path, tg::memory::gfx_gen::gfx11, 1);
  const fs::path p = dir.path / "gc_11_0_0_mec.bin";
  SUBCASE("size_bytes larger than the file") {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    const std::uint32_t huge = 0x7FFFFFFF;
    f.write(reinterpret_cast<const char*>(&huge), 4);
    f.close();
    CHECK_THROWS_WITH_AS(read_firmware_file(dir.path, "gc_11_0_0_mec.bin"),
                         doctest::Contains("header field size_bytes at byte 0 is 2147483647"), tg::usage_error);
  }
  SUBCASE("an image offset beyond the file") {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);  // gfx v2.0 ucode_offset_bytes
    const std::uint32_t far = 0x10000000;
    f.write(reinterpret_cast<const char*>(&far), 4);
    f.close();
    CHECK_THROWS_WITH_AS(load_firmware(dir.path, gfx11),
                         doctest::Contains("gc_11_0_0_mec.bin: ucode_offset_bytes (header byte 40) gives [268435456"),
                         tg::usage_error);
  }
}

// amdgpu_rlc.c: amdgpu_gfx_rlc_init_microcode_v2_1 / _v2_2 / _v2_3 take each part from its
// {size, offset from the file start} pair; they load in amdgpu_ucode.h AMDGPU_UCODE_ID order.
TEST_CASE("the RLC file gives every v2.2 / v2.3 part in AMDGPU_UCODE_ID order, RLC_G last") {
  temp_dir dir;
  using namespace gfx_fw_type;
  SUBCASE("gfx11: rlc v2.2") {
    tg::emu::write_firmware_images(dir.path, tg::memory::gfx_gen::gfx11, 3);
    const firmware_set s = load_firmware(dir.path, gfx11);
    const std::vector<std::uint32_t> t = types_of(s);
    const std::vector<std::uint32_t> tail(t.end() - 6, t.end());
    CHECK(tail == std::vector<std::uint32_t>{rlc_restore_list_srm_cntl, rlc_restore_list_gpm_mem,
                                             rlc_restore_list_srm_mem, rlc_iram, rlc_dram_boot, rlc_g});
    CHECK(count_type(s, rlc_p) == 0);
    const firmware_file f = read_firmware_file(dir.path, "gc_11_0_0_rlc.bin");
    CHECK(f.header.header_version_minor == 2);
    CHECK(image_of(s, rlc_iram).bytes == slice(f.bytes, u32_at(f.bytes, 160), u32_at(f.bytes, 156)));
    CHECK(image_of(s, rlc_restore_list_srm_mem).bytes == slice(f.bytes, u32_at(f.bytes, 152), u32_at(f.bytes, 148)));
  }
  SUBCASE("gfx12: rlc v2.3 adds RLC_P and RLC_V") {
    tg::emu::write_firmware_images(dir.path, tg::memory::gfx_gen::gfx12, 4);
    const firmware_set s = load_firmware(dir.path, gfx12);
    const std::vector<std::uint32_t> t = types_of(s);
    const std::vector<std::uint32_t> tail(t.end() - 8, t.end());
    CHECK(tail == std::vector<std::uint32_t>{rlc_restore_list_srm_cntl, rlc_restore_list_gpm_mem,
                                             rlc_restore_list_srm_mem, rlc_iram, rlc_dram_boot, rlc_p, rlc_v, rlc_g});
    const firmware_file f = read_firmware_file(dir.path, "gc_12_0_0_rlc.bin");
    CHECK(image_of(s, rlc_v).bytes == slice(f.bytes, u32_at(f.bytes, 184), u32_at(f.bytes, 180)));
  }
}

// amdgpu_ucode.c: amdgpu_ucode_init_single_fw cuts IMU_I at ucode_array_offset_bytes and IMU_D
// right after it (imu_v11_0.c / imu_v12_0.c load them so), not at imu_*_ucode_offset_bytes.
TEST_CASE_TEMPLATE("the IMU images start at the ucode array, DRAM right behind IRAM", V,
                   std::integral_constant<int, 11>, std::integral_constant<int, 12>) {
  temp_dir dir;
  const bool g12 = V::value == 12;
  tg::emu::write_firmware_images(dir.path, g12 ? tg::memory::gfx_gen::gfx12 : tg::memory::gfx_gen::gfx11, 5);
  const firmware_set s = load_firmware(dir.path, g12 ? gfx12 : gfx11);
  const firmware_file f = read_firmware_file(dir.path, g12 ? "gc_12_0_0_imu.bin" : "gc_11_0_0_imu.bin");
  const std::uint32_t array = f.header.ucode_array_offset_bytes, iram = u32_at(f.bytes, 32), dram = u32_at(f.bytes, 40);
  CHECK(image_of(s, gfx_fw_type::imu_i).bytes == slice(f.bytes, array, iram));
  CHECK(image_of(s, gfx_fw_type::imu_d).bytes == slice(f.bytes, array + iram, dram));
}

// amdgpu_gfx.c: amdgpu_gfx_cp_init_microcode lists a PFP / ME stack per gfx pipe: two on GC 11, one on GC 12.
TEST_CASE("GC 11 loads the PFP and ME stacks of pipes 0 and 1, GC 12 of pipe 0") {
  temp_dir dir;
  tg::emu::write_firmware_images(dir.path, tg::memory::gfx_gen::gfx11, 6);
  const firmware_set s11 = load_firmware(dir.path, gfx11);
  for (std::uint32_t t : {gfx_fw_type::rs64_pfp_stack, gfx_fw_type::rs64_pfp_p1_stack, gfx_fw_type::rs64_me_stack,
                          gfx_fw_type::rs64_me_p1_stack})
    CHECK(count_type(s11, t) == 1);
  CHECK(image_of(s11, gfx_fw_type::rs64_pfp_p1_stack).bytes == image_of(s11, gfx_fw_type::rs64_pfp_stack).bytes);
  temp_dir dir12;
  tg::emu::write_firmware_images(dir12.path, tg::memory::gfx_gen::gfx12, 6);
  const firmware_set s12 = load_firmware(dir12.path, gfx12);
  CHECK(count_type(s12, gfx_fw_type::rs64_pfp_stack) == 1);
  CHECK(count_type(s12, gfx_fw_type::rs64_pfp_p1_stack) == 0);
}

// amdgpu_psp.c: parse_sos_bin_descriptor warns "Unsupported PSP FW type" and goes on.
TEST_CASE("a PSP component of a type this driver does not know is skipped with a warning, not an error") {
  temp_dir dir;
  tg::emu::write_firmware_images(dir.path, tg::memory::gfx_gen::gfx11, 8);
  const fs::path p = dir.path / "psp_13_0_0_sos.bin";
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(36 + 16 * 2);  // psp_fw_bin[2].fw_type (SOC_DRV in the writer's list)
    const std::uint32_t unknown = 99;
    f.write(reinterpret_cast<const char*>(&unknown), 4);
  }
  std::vector<std::string> lines;
  tg::set_log_callback([&](tg::log_level level, std::string_view line) {
    if (level == tg::log_level::warning) lines.emplace_back(line);
  });
  const std::vector<psp_component> c = parse_psp_sos(read_firmware_file(dir.path, "psp_13_0_0_sos.bin"));
  tg::set_log_callback({});
  CHECK(c.size() == 7);  // eight listed, one skipped
  for (const psp_component& x : c) CHECK(x.type != psp_component_type::soc_drv);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("psp_fw_bin[2].fw_type 99") != std::string::npos);
}
