// doorbell.hpp: the 64-bit store that tells an engine its write pointer moved.
//
// A ring calls write64(put value) after the ring contents and the write-pointer shadow are
// published (ring.hpp). Implementations:
//   - driver, PCI: a 64-bit store into the doorbell BAR (BAR2) at the queue's doorbell offset
//     (8 x amdgpu_doorbell.h's AMDGPU_NAVI10_DOORBELL_MEC_RING0 / _sDMA_ENGINE0: compute 0x18,
//     SDMA0 0x800), preceded by the HDP flush of tinygrad/runtime/ops_amd.py:
//     AMDQueueDesc.signal_doorbell, which the driver owns because it needs the MMIO mapping;
//   - emulator: run the queue's packets up to `value`;
//   - tests: record the value and let a consumer thread see it.
// The value is in the queue's units (PM4: dwords, SDMA: bytes; sdma_v6_0_ring_set_wptr writes wptr << 2).
//
// The engine must keep going without further doorbells, as hardware does: host waits (ring space,
// signals) only poll memory and never ring again. An emulator that executes packets only inside
// write64 would leave a queue blocked on WAIT_REG_MEM / POLL_REGMEM stuck until the wait times
// out; it should run its queues on a thread (or from the ring's wait hook).
#pragma once
#include <cstdint>

namespace tg::queue {

class doorbell {
 public:
  virtual ~doorbell() = default;
  virtual void write64(std::uint64_t value) = 0;
};

}  // namespace tg::queue
