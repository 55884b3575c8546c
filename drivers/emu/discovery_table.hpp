// discovery_table.hpp: the IP discovery binary the emulated GPU leaves at VRAM end - 64 KiB, where
// a driver looks for it first (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.cppendix B step 1).
//
// Layouts are those of Linux 6.12 include/discovery.h (packed, little-endian): a binary header
// (signature 0x28211407, a byte-sum checksum over everything after its checksum field, table
// list), the IP discovery table v4 (signature 0x53445049, one die, ip_v4 records with 32-bit
// bases, each base list padded with zeros to 10 entries as the reference mock does), gc_info v2.1
// and a harvest table that harvests nothing. The bases are the navi-family ones the emulator's
// register indices are built from (personality.cpp), so a driver computing base[segment] +
// offset lands on the registers the emulator models.
//
//   std::vector<std::byte> bin = tg::emu::build_discovery_table(g.chip());
//   g.vram().write({g.vram().size_bytes() - tg::emu::discovery_offset_from_end}, bin);
//
// Pure functions; thread-safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "drivers/emu/personality.hpp"

namespace tg::emu {

inline constexpr std::uint64_t discovery_offset_from_end = 64 * 1024;  // tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c
inline constexpr std::uint64_t discovery_max_bytes = 10 * 1024;        // what a driver reads

// Hardware ids of Linux include/soc15_hw_ip.h.
namespace hw_id {
inline constexpr std::uint16_t mp1 = 1, gc = 11, mmhub = 34, osssys = 40, hdp = 41, sdma0 = 42, nbif = 108,
                               mp0 = 255;
}

struct discovery_ip {
  std::uint16_t hw_id;
  ip_version version;
  std::vector<std::uint32_t> bases;  // by segment
};

// gc_info v2.1 (discovery.h struct gc_info_v2_1), the fields after the header in order.
struct gc_info {
  std::uint32_t num_se, num_cu_per_sh, num_sh_per_se, num_rb_per_se, num_tccs, num_gprs, num_max_gs_thds,
      gs_table_depth, gsprim_buff_depth, parameter_cache_depth, double_offchip_lds_buffer, wave_size,
      max_waves_per_simd, max_scratch_slots_per_cu, lds_size, num_sc_per_se, num_packer_per_sc, num_tcp_per_sh,
      tcp_size_per_cu, num_sdp_interface, num_cu_per_sqc, instruction_cache_size_per_sqc,
      scalar_data_cache_size_per_sqc, tcc_size;
};

// What the emulated chip publishes.
std::vector<discovery_ip> discovery_ips(const personality& chip);
gc_info discovery_gc_info(const personality& chip);

// The whole binary (at most discovery_max_bytes).
std::vector<std::byte> build_discovery_table(const personality& chip);

// Linux's checksum: the 16-bit sum of the bytes (amdgpu_discovery_calculate_checksum).
std::uint16_t discovery_checksum(std::span<const std::byte> bytes);

}  // namespace tg::emu
