// am_firmware_test.cpp: firmware files from the emulator's independent writer, parsed by the driver.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <tg/core/error.hpp>

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
