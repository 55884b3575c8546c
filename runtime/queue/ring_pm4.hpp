// ring_pm4.hpp: the compute (MEC) ring: PM4 dwords, a dword write pointer, back-pressure.
//
// Pointer units (tinygrad/runtime/ops_amd.py: AMDComputeQueue._submit): the put value, write-pointer
// shadow and doorbell value count dwords and only grow; the CP reports its read pointer in dwords.
// PM4 packets may run across the ring end: the CP follows the wrap (the reference writes modulo the
// ring size), so no padding is needed.
//
//   tg::queue::ring_pm4 ring({.name = "compute0", .ring = mem, .rptr = p.rptr, .wptr = p.wptr, .bell = &bell});
//   ring.submit({commands, signal_packet});  // one doorbell for both
#pragma once
#include <initializer_list>
#include <utility>
#include <span>

#include "runtime/queue/ring.hpp"

namespace tg::queue {

class ring_pm4 : public ring {
 public:
  explicit ring_pm4(ring_config config) : ring(std::move(config), 4) {}

  // Waits for room for all parts, copies them one after another and rings the doorbell once.
  void submit(std::initializer_list<std::span<const std::uint32_t>> parts);
};

}  // namespace tg::queue
