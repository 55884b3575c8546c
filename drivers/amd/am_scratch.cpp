// am_scratch.cpp: scratch sizing and COMPUTE_TMPRING_SIZE (see am_scratch.hpp).
#include "drivers/amd/am_scratch.hpp"

#include <algorithm>

#include <tg/core/error.hpp>

namespace tg::amd {

namespace {
constexpr std::uint64_t lanes_per_wave = 64, wave_unit_bytes = 256;  // gfx10+
}  // namespace

scratch_size size_scratch(const gc_info& gc, std::uint32_t private_bytes) {
  const std::uint64_t cus = std::uint64_t{gc.num_se} * gc.sh_per_se * gc.cu_per_sh;
  if (cus == 0 || gc.max_scratch_slots_per_cu == 0)
    throw usage_error(str("am: the GC info gives ", gc.num_se, " SEs x ", gc.sh_per_se, " SHs x ", gc.cu_per_sh,
                          " CUs and ", gc.max_scratch_slots_per_cu, " scratch slots per CU; scratch cannot be sized"));
  scratch_size s;
  s.lane_bytes = (std::max(private_bytes, min_scratch_lane_bytes) + 3) / 4 * 4;
  s.bytes = s.lane_bytes * lanes_per_wave * gc.max_scratch_slots_per_cu * cus;
  s.wavesize = std::uint32_t((lanes_per_wave * s.lane_bytes + wave_unit_bytes - 1) / wave_unit_bytes);
  s.waves = std::uint32_t(std::min<std::uint64_t>(s.bytes / (std::uint64_t{s.wavesize} * wave_unit_bytes) / gc.num_se,
                                                  cus * gc.max_scratch_slots_per_cu));
  return s;
}

std::uint32_t scratch_size::tmpring(const queue::reg_table& gc) const {
  const queue::reg_field& f_waves = gc.field(gc.reg("regCOMPUTE_TMPRING_SIZE"), "WAVES");
  const queue::reg_field& f_size = gc.field(gc.reg("regCOMPUTE_TMPRING_SIZE"), "WAVESIZE");
  if (wavesize > f_size.max_value())
    throw usage_error(str("am: a scratch wave of ", wavesize, " x 256 bytes (", lane_bytes,
                          " bytes per lane) does not fit COMPUTE_TMPRING_SIZE.WAVESIZE (at most ", f_size.max_value(),
                          ")"));
  return f_size.set(f_waves.set(0, std::min(waves, f_waves.max_value())), wavesize);
}

}  // namespace tg::amd
