// am_discovery.hpp: the IP discovery table of an AMD GPU: which IP blocks it has, their versions
// and register bases, the GC shape, and the VRAM size. Needs no firmware, so `tg-amd info` can
// show it before (or without) a boot.
//
// The table sits at VRAM end - 64 KiB (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c, tinygrad/runtime/support/am/amdev.py: AMDev; Linux amdgpu_discovery.h
// DISCOVERY_TMR_OFFSET) and is read through BAR0 when BAR0 covers it, else one dword at a time
// through the MM_INDEX / MM_DATA window (Linux Documentation/PCI/sysfs-pci.rst). Layouts: Linux include/discovery.h.
//
//   tg::amd::discovery d = tg::amd::read_discovery(transport);
//   std::cout << d.gfx_target() << " " << (d.vram_bytes >> 20) << " MiB\n";
//
// parse_discovery works on bytes alone (tests, a table dumped to a file). Errors: usage_error
// naming `where`, the field and its byte offset for a bad signature, checksum or truncation.
// Not thread-safe (read_discovery uses the transport).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/transport/transport.hpp"

namespace tg::amd {

// Hardware ids of the blocks the driver uses (Linux include/soc15_hw_ip.h *_HWID).
namespace hw_id {
inline constexpr std::uint16_t mp1 = 1, gc = 11, mmhub = 34, athub = 35, osssys = 40, hdp = 41, sdma0 = 42,
                               nbif = 108, mp0 = 255;
}  // namespace hw_id

struct ip_version {
  std::uint8_t major = 0, minor = 0, revision = 0;
  friend constexpr bool operator==(ip_version, ip_version) = default;
  // "13_0_0": the spelling of firmware file names (tinygrad/runtime/support/am/amdev.py: AMDev).
  std::string file_tag() const;
  std::string text() const;  // "13.0.0"
};

struct ip_block {
  std::uint16_t hw_id = 0;
  std::uint8_t instance = 0;
  ip_version version;
  std::vector<std::uint64_t> bases;  // dword register index of each segment
  bool harvested = false;            // listed in the harvest table: fused off, not to be touched
};

// GC info (discovery.h gc_info_v1_x / v2_x), in the fields llvm/docs/AMDGPUUsage.rst derives properties from.
struct gc_info {
  std::uint16_t version_major = 0, version_minor = 0;
  std::uint32_t num_se = 0, cu_per_sh = 0, sh_per_se = 0, wave_size = 0, max_waves_per_simd = 0,
                max_scratch_slots_per_cu = 0, lds_size_kb = 0;
};

struct discovery {
  std::string device;             // the transport's name, for messages
  std::uint64_t vram_bytes = 0;   // RCC_CONFIG_MEMSIZE (MiB) << 20 (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)
  transport::bar_region bar0, bar2, bar5;
  bool large_bar = false;         // BAR0 covers all of VRAM (Linux Documentation/PCI/sysfs-pci.rst)
  std::uint16_t binary_version_major = 0, binary_version_minor = 0, table_version = 0;
  std::vector<ip_block> ips;
  std::optional<gc_info> gc;

  // The first non-harvested instance `instance` of a block, or nullptr.
  const ip_block* find(std::uint16_t hw, std::uint8_t instance = 0) const;
  // The same, or a device_error naming the block ("the table lists no GC").
  const ip_block& require(std::uint16_t hw, std::uint8_t instance = 0) const;
  ip_version version_of(std::uint16_t hw) const { return require(hw).version; }
  // The LLVM processor: "gfx1100", "gfx1201": "gfx%d%x%x" of the GC version (tinygrad/runtime/support/am/amdev.py),
  // but for the GC versions amdkfd/kfd_device.c (kgd2kfd_probe) renames: GC 11.0.3 is "gfx1101".
  std::string gfx_target() const;
  bool is_gfx11() const { return version_of(hw_id::gc).major == 11; }
  bool is_gfx12() const { return version_of(hw_id::gc).major == 12; }
};

// Where the table starts: VRAM end - 64 KiB; and the most it reads (Linux DISCOVERY_TMR_SIZE).
inline constexpr std::uint64_t discovery_offset_from_end = 64 << 10;
inline constexpr std::size_t discovery_max_bytes = 10 << 10;

std::string_view hw_name(std::uint16_t hw);  // "GC", "MP0", ... or "" when unknown

// Parses a table (the binary header onward). `where` names the source in messages.
discovery parse_discovery(std::span<const std::byte> table, std::string_view where);

// Reads VRAM size, BARs and the table from the GPU. Touches nothing but reads (and the MM_INDEX
// window registers on a small BAR).
discovery read_discovery(transport::device_transport& t);

}  // namespace tg::amd
