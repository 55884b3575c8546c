// emu_firmware.cpp: writes firmware files with amdgpu_ucode.h headers (see emu_firmware.hpp).
#include "drivers/emu/firmware/emu_firmware.hpp"

#include <cstring>
#include <fstream>
#include <random>

#include <zstd.h>

#include <tg/core/error.hpp>

namespace tg::emu {

namespace {

// A file under construction: header dwords first, payloads appended after the header.
struct file_builder {
  std::vector<std::byte> bytes;
  std::mt19937_64& rng;

  file_builder(std::size_t header_bytes, std::mt19937_64& r) : bytes(header_bytes), rng(r) {}
  void put32(std::size_t at, std::uint32_t v) { std::memcpy(bytes.data() + at, &v, 4); }
  // Appends `size` random bytes (256-byte aligned start, as real images are); returns the offset.
  std::uint32_t append(std::size_t size) {
    bytes.resize((bytes.size() + 255) / 256 * 256);
    const std::size_t at = bytes.size();
    bytes.resize(at + size);
    for (std::size_t i = at; i < bytes.size(); ++i) bytes[i] = std::byte(rng() & 0xFF);
    return std::uint32_t(at);
  }
  // common_firmware_header: sizes, header version major.minor, ip version, ucode fields.
  void common(std::uint16_t hv_major, std::uint16_t hv_minor, std::uint32_t ucode_size, std::uint32_t ucode_at) {
    put32(0, std::uint32_t(bytes.size()));
    put32(4, header_bytes);
    put32(8, std::uint32_t(hv_minor) << 16 | hv_major);
    put32(12, 0);
    put32(16, 0x100 + hv_major);  // ucode_version
    put32(20, ucode_size);
    put32(24, ucode_at);
    put32(28, 0);
  }
  std::uint32_t header_bytes = 0;
};

void write_file(const std::filesystem::path& path, const std::vector<std::byte>& b, bool compress) {
  std::vector<std::byte> out = b;
  if (compress) {
    out.resize(ZSTD_compressBound(b.size()));
    const std::size_t n = ZSTD_compress(out.data(), out.size(), b.data(), b.size(), 3);
    if (ZSTD_isError(n)) throw device_error(str("emu firmware: zstd failed for ", path.string()));
    out.resize(n);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(out.data()), std::streamsize(out.size()));
  if (!f) throw device_error(str("emu firmware: cannot write ", path.string()));
}

file_builder make(std::size_t header_bytes, std::mt19937_64& rng) {
  file_builder b(header_bytes, rng);
  b.header_bytes = std::uint32_t(header_bytes);
  return b;
}

// psp v2.0: count at 32, descriptors {type, version, offset from ucode array, size} from 36.
std::vector<std::byte> psp_sos(std::mt19937_64& rng, bool has_spl) {
  std::vector<std::uint32_t> types = {3 /*KDB*/, 2 /*SYS_DRV*/, 7 /*SOC_DRV*/, 8 /*INTF_DRV*/, 9 /*DBG_DRV*/,
                                      10 /*RAS_DRV*/, 1 /*SOS*/, 4 /*TOC*/};
  if (has_spl) types.insert(types.begin() + 1, 5 /*SPL*/);
  file_builder b = make(36 + 16 * types.size(), rng);
  const std::uint32_t array_at = std::uint32_t((b.bytes.size() + 255) / 256 * 256);
  b.put32(32, std::uint32_t(types.size()));
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::size_t size = 1024 + 256 * (rng() % 8);
    const std::uint32_t at = b.append(size);
    const std::size_t d = 36 + 16 * i;
    b.put32(d, types[i]);
    b.put32(d + 4, 0x1000 + std::uint32_t(i));
    b.put32(d + 8, at - array_at);
    b.put32(d + 12, std::uint32_t(size));
  }
  b.common(2, 0, std::uint32_t(b.bytes.size() - array_at), array_at);
  return b.bytes;
}

std::vector<std::byte> plain_ucode(std::mt19937_64& rng, std::uint16_t hv_major, std::size_t header_bytes) {
  file_builder b = make(header_bytes, rng);
  const std::uint32_t at = b.append(4096);
  b.common(hv_major, 0, 4096, at);
  return b.bytes;
}

// sdma v2.0 (ctx image in the ucode array, ctl image by offset at 48) or v3.0 (offset 36, size 40).
std::vector<std::byte> sdma(std::mt19937_64& rng, bool v3) {
  file_builder b = make(v3 ? 44 : 64, rng);
  const std::uint32_t ctx = b.append(3072), ctl = v3 ? 0 : b.append(2048);
  b.common(v3 ? 3 : 2, 0, 3072, ctx);
  if (v3) {
    b.put32(36, ctx);
    b.put32(40, 3072);
  } else {
    b.put32(36, 3072);
    b.put32(48, ctl);
    b.put32(52, 2048);
  }
  return b.bytes;
}

// gfx v2.0 (RS64): ucode size 36, offset 40, data size 44, offset 48, start address lo 52, hi 56.
std::vector<std::byte> rs64(std::mt19937_64& rng, std::uint32_t start_lo) {
  file_builder b = make(60, rng);
  const std::uint32_t ucode = b.append(4096), data = b.append(1024);
  b.common(2, 0, 4096, ucode);
  b.put32(36, 4096);
  b.put32(40, ucode);
  b.put32(44, 1024);
  b.put32(48, data);
  b.put32(52, start_lo);
  b.put32(56, 0);
  return b.bytes;
}

// imu v1.0: iram size 32, offset 36, dram size 40, offset 44. The kernel finds IRAM at the ucode
// array and DRAM right behind it (amdgpu_ucode.c: amdgpu_ucode_init_single_fw, IMU_I / IMU_D); the
// offset fields are written relative to the ucode array (0 and the IRAM size), so a reader that
// takes them as file offsets gets the header instead.
std::vector<std::byte> imu(std::mt19937_64& rng) {
  constexpr std::uint32_t iram_bytes = 2048, dram_bytes = 1024;
  file_builder b = make(48, rng);
  const std::uint32_t iram = b.append(iram_bytes + dram_bytes);  // one ucode array: IRAM then DRAM
  b.common(1, 0, iram_bytes + dram_bytes, iram);
  b.put32(32, iram_bytes);
  b.put32(36, 0);
  b.put32(40, dram_bytes);
  b.put32(44, iram_bytes);
  return b.bytes;
}

// rlc v2.2 / v2.3 (amdgpu_ucode.h rlc_firmware_header_v2_0 .. _v2_3: 172 / 188 bytes): RLC_G in the
// ucode array, then the restore lists (v2.1 cntl 116/120, gpm 132/136, srm 148/152), IRAM and DRAM
// (v2.2: 156/160, 164/168) and, for v2.3, RLC_P and RLC_V (172/176, 180/184); sizes then offsets
// from the start of the file, as amdgpu_rlc.c: amdgpu_gfx_rlc_init_microcode_v2_1.._v2_3 read them.
std::vector<std::byte> rlc(std::mt19937_64& rng, std::uint16_t minor) {
  file_builder b = make(minor >= 3 ? 188 : 172, rng);
  const std::uint32_t g = b.append(4096);
  struct part {
    std::size_t size_at, offset_at;
    std::uint32_t bytes;
  };
  std::vector<part> parts = {{116, 120, 512}, {132, 136, 768}, {148, 152, 1024}, {156, 160, 2048}, {164, 168, 1536}};
  if (minor >= 3) parts.insert(parts.end(), {{172, 176, 1280}, {180, 184, 1792}});
  for (const part& p : parts) {
    b.put32(p.size_at, p.bytes);
    b.put32(p.offset_at, b.append(p.bytes));
  }
  b.put32(104, 0x20);  // reg_list_format_direct_reg_list_length (v2.1), any value
  b.common(2, minor, 4096, g);
  return b.bytes;
}

}  // namespace

firmware_ip_versions firmware_versions_for(memory::gfx_gen gen) {
  return firmware_versions_for(gen == memory::gfx_gen::gfx12 ? "gfx1200" : "gfx1100");
}

// The names Linux asks for (amdgpu_ucode_ip_version_decode spells the IP versions): psp_v13_0.c
// MODULE_FIRMWARE psp_13_0_0_sos.bin / psp_13_0_10_sos.bin, psp_v14_0.c psp_14_0_2_sos.bin /
// psp_14_0_3_sos.bin, smu_v13_0.c smu_13_0_0.bin / smu_13_0_10.bin, smu_v14_0.c smu_14_0_2.bin /
// smu_14_0_3.bin, sdma_v6_0.c sdma_6_0_0.bin / sdma_6_0_3.bin, sdma_v7_0.c sdma_7_0_0.bin /
// sdma_7_0_1.bin, gfx_v11_0.c and imu_v11_0.c gc_11_0_{0,3}_*.bin, gfx_v12_0.c and imu_v12_0.c
// gc_12_0_{0,1}_*.bin. Which versions each card has: drivers/emu/personality.cpp.
firmware_ip_versions firmware_versions_for(std::string_view processor) {
  if (processor == "gfx1100") return {"13_0_0", "13_0_0", "6_0_0", "11_0_0"};
  if (processor == "gfx1101") return {"13_0_10", "13_0_10", "6_0_3", "11_0_3"};
  if (processor == "gfx1200") return {"14_0_2", "14_0_2", "7_0_0", "12_0_0"};
  if (processor == "gfx1201") return {"14_0_3", "14_0_3", "7_0_1", "12_0_1"};
  throw usage_error(str("emu firmware: no emulated GPU is a ", processor, " (gfx1100, gfx1101, gfx1200, gfx1201)"));
}

std::vector<std::filesystem::path> write_firmware_images(const std::filesystem::path& dir,
                                                         const firmware_ip_versions& v, bool sdma_v3,
                                                         std::uint64_t seed, firmware_options options) {
  std::filesystem::create_directories(dir);
  std::mt19937_64 rng(seed);
  const bool has_spl = v.mp0.rfind("14_", 0) == 0;  // MP0 >= 14 loads an SPL table (tinygrad/runtime/support/am/amdev.py: AMDev)
  const std::string gc = "gc_" + v.gc;
  const std::vector<std::pair<std::string, std::vector<std::byte>>> files = {
      {"psp_" + v.mp0 + "_sos.bin", psp_sos(rng, has_spl)},
      {"smu_" + v.mp1 + ".bin", plain_ucode(rng, 1, 32)},
      {"sdma_" + v.sdma0 + ".bin", sdma(rng, sdma_v3)},
      {gc + "_pfp.bin", rs64(rng, 0x3000)},
      {gc + "_me.bin", rs64(rng, 0x3400)},
      {gc + "_mec.bin", rs64(rng, 0x3800)},
      {gc + "_imu.bin", imu(rng)},
      // gfx11 ships v2.2 here and gfx12 v2.3, so the driver meets both layouts.
      {gc + "_rlc.bin", rlc(rng, v.gc.rfind("12_", 0) == 0 ? 3 : 2)},
  };
  std::vector<std::filesystem::path> written;
  for (const auto& [name, bytes] : files) {
    written.push_back(dir / (options.compress ? name + ".zst" : name));
    write_file(written.back(), bytes, options.compress);
  }
  return written;
}

std::vector<std::filesystem::path> write_firmware_images(const std::filesystem::path& dir, memory::gfx_gen gen,
                                                         std::uint64_t seed, firmware_options options) {
  return write_firmware_images(dir, firmware_versions_for(gen), gen == memory::gfx_gen::gfx12, seed, options);
}

std::vector<std::filesystem::path> write_firmware_images(const std::filesystem::path& dir, std::string_view processor,
                                                         std::uint64_t seed, firmware_options options) {
  const firmware_ip_versions v = firmware_versions_for(processor);
  return write_firmware_images(dir, v, v.gc.rfind("12_", 0) == 0, seed, options);  // SDMA 7 files are v3.0
}

}  // namespace tg::emu
