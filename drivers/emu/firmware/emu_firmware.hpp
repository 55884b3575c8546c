// emu_firmware.hpp: a complete firmware folder for the emulated GPUs, in the Linux amdgpu formats
// (amdgpu_ucode.h headers, random payloads), so the AM driver boots the emulator from files as it
// boots a card from /lib/firmware/amdgpu.
//
// Written from the header layouts directly (not through drivers/amd's parser), so tests of the
// parser check it against an independent writer. Payloads are random bytes from `seed`: the
// emulator's PSP does not execute them.
//
//   auto files = tg::emu::write_firmware_images(dir, tg::memory::gfx_gen::gfx12, 42);
//
// Thread-safe (writes only the folder it is given).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/memory/gfx_gen.hpp"

namespace tg::emu {

// IP versions as "13_0_0": the file-name spelling.
struct firmware_ip_versions {
  std::string mp0, mp1, sdma0, gc;
};
// The emulated gfx11 (MP0/MP1 13.0.0, SDMA 6.0.0, GC 11.0.0) and gfx12 (14.0.2, SDMA 7.0.0, GC 12.0.0).
firmware_ip_versions firmware_versions_for(memory::gfx_gen gen);
// By processor (drivers/emu/personality.hpp): gfx1100 and gfx1200 as above, gfx1101 (RX 7800 XT:
// 13.0.10, SDMA 6.0.3, GC 11.0.3) and gfx1201 (RX 9070 XT: 14.0.3, SDMA 7.0.1, GC 12.0.1);
// usage_error for another name.
firmware_ip_versions firmware_versions_for(std::string_view processor);

struct firmware_options {
  bool compress = false;  // write name.bin.zst instead of name.bin
};

// Writes psp_<MP0>_sos, smu_<MP1>, sdma_<SDMA0>, gc_<GC>_{pfp,me,mec,imu,rlc} into `dir` (created
// if missing); returns the paths written.
std::vector<std::filesystem::path> write_firmware_images(const std::filesystem::path& dir, memory::gfx_gen gen,
                                                         std::uint64_t seed, firmware_options options = {});
std::vector<std::filesystem::path> write_firmware_images(const std::filesystem::path& dir, std::string_view processor,
                                                         std::uint64_t seed, firmware_options options = {});
std::vector<std::filesystem::path> write_firmware_images(const std::filesystem::path& dir,
                                                         const firmware_ip_versions& versions, bool sdma_v3,
                                                         std::uint64_t seed, firmware_options options = {});

}  // namespace tg::emu
