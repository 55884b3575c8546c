// am_scratch.hpp: the size of a device's scratch (private segment) memory and the
// COMPUTE_TMPRING_SIZE value that describes it, from a kernel's private_segment_fixed_size and
// the GC info of discovery: tinygrad's AMDDevice._ensure_has_local_memory (ops_amd.py), which
// sizes for every wave slot of every CU, as the ROCm runtime does for Linux's KFD queues.
//
// Lanes are counted 64 per wave even for wave32, scratch is reserved in 256-byte units per wave
// (gfx10+), and the buffer holds a wave of scratch for each scratch slot of each CU:
//   lane_bytes = round_up(private bytes, 4)      bytes = lane_bytes * 64 * slots_per_cu * cu_count
//   WAVESIZE   = ceil(64 * lane_bytes / 256)      WAVES = min(bytes / (WAVESIZE * 256) / se_count,
//                                                             cu_count * slots_per_cu)
// e.g. an RX 7900 XTX (96 CUs, 32 slots, 6 SEs) at 128 bytes: 24 MiB, WAVESIZE 32, WAVES 512.
//
//   tg::amd::scratch_size s = tg::amd::size_scratch(*disc.gc, 256);
//   std::uint32_t tmpring = s.tmpring(gc_table);
#pragma once
#include <cstdint>

#include "drivers/amd/am_discovery.hpp"
#include "runtime/queue/reg_table.hpp"

namespace tg::amd {

struct scratch_size {
  std::uint32_t lane_bytes = 0;  // per work-item
  std::uint64_t bytes = 0;       // the whole buffer
  std::uint32_t wavesize = 0;    // COMPUTE_TMPRING_SIZE.WAVESIZE: 256-byte units per wave
  std::uint32_t waves = 0;       // COMPUTE_TMPRING_SIZE.WAVES
  // COMPUTE_TMPRING_SIZE encoded with the generation's field widths (gc_11_0_0 / gc_12_0_0 tables);
  // usage_error when WAVESIZE does not fit.
  std::uint32_t tmpring(const queue::reg_table& gc) const;
};

// The least scratch tg reserves per lane (tinygrad starts at 128 bytes, so small kernels never grow it).
inline constexpr std::uint32_t min_scratch_lane_bytes = 128;

// For `private_bytes` per work-item (at least min_scratch_lane_bytes is reserved). usage_error
// when the GC info lacks CU or scratch-slot counts.
scratch_size size_scratch(const gc_info& gc, std::uint32_t private_bytes);

}  // namespace tg::amd
