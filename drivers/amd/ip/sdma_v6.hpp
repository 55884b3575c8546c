// sdma_v6.hpp: SDMA 6 (gfx11) / SDMA 7 (gfx12) engine 0: block init and its queue 0 ring
// (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c). One code path: registers by name from the GC table, which holds SDMA0 on both;
// the firmware-thread control register and the write-pointer poll bit were renamed on SDMA 7
// (F32 -> MCU), which the code picks by generation.
//
//   tg::amd::sdma_v6 sdma(ctx);
//   sdma.hw_init();
//   sdma.start_queue({.ring_va = ring, .ring_bytes = 1 << 20, .rptr_va = r, .wptr_va = w});
//   sdma.stop_queue();  // RB and IB disabled, doorbell off (teardown, recovery)
//
// Not thread-safe.
#pragma once
#include <cstdint>

#include "drivers/amd/am_context.hpp"

namespace tg::amd {

struct sdma_queue_setup {
  std::uint64_t ring_va = 0, ring_bytes = 0;  // 256-byte aligned; a power of two
  std::uint64_t rptr_va = 0, wptr_va = 0;
  std::uint64_t doorbell_offset = 0x800;      // BAR2 bytes (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)
};

class sdma_v6 {
 public:
  explicit sdma_v6(am_context& c) : c_(c) {}
  // Watchdog, UTCL1 policy, firmware threads out of halt, traps on (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c).
  void hw_init();
  void start_queue(const sdma_queue_setup& q);
  void stop_queue();

 private:
  bool is_v7() const { return c_.disc.is_gfx12(); }
  am_context& c_;
};

}  // namespace tg::amd
