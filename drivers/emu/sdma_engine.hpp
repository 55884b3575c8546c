// sdma_engine.hpp: SDMA0 queue 0: runs the SDMA packets of its ring.
//
// Created when the driver writes SDMA0_QUEUE0_RB_CNTL with RB_ENABLE (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c);
// pointers, the doorbell and the read-pointer write-back are in bytes (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c).
// Packets (SDMA 6/7 layouts, sdma_gen.hpp): NOP, COPY_LINEAR, WRITE, INDIRECT, FENCE, TRAP,
// POLL_REGMEM, CONST_FILL, TIMESTAMP, GCR_REQ, DUMMY_TRAP. Unlike PM4, a packet must not straddle
// the ring end (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c): one that does is a bad_packet fault, which catches a host that
// forgot to pad the tail with NOPs.
#pragma once
#include "drivers/emu/queue_engine.hpp"

namespace tg::emu {

class sdma_engine final : public queue_engine {
 public:
  sdma_engine(gpu_core& core, const ring_config& ring);

 private:
  outcome execute(packet& p) override;
  void publish_pointers(std::uint64_t rptr, std::uint64_t wptr) override;
  outcome poll_regmem(packet& p);
};

}  // namespace tg::emu
