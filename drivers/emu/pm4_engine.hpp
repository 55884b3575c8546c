// pm4_engine.hpp: a compute queue (one HQD of the MEC): runs the PM4 packets of its ring.
//
// Created when the driver sets CP_HQD_ACTIVE (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c); pointers and the doorbell are in
// dwords (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c). Packets: NOP, SET_SH_REG, SET_UCONFIG_REG, WAIT_REG_MEM, ACQUIRE_MEM,
// RELEASE_MEM, EVENT_WRITE, INDIRECT_BUFFER and DISPATCH_DIRECT (nvd.h: PACKET3_*; the packets tinygrad/runtime/ops_amd.py: AMDComputeQueue builds); anything else is a
// bad_packet fault naming the opcode. Packets may wrap around the ring end, as the CP allows
// (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c). Work is synchronous: a dispatch has finished when the next packet runs, so
// CS_PARTIAL_FLUSH and cache operations have nothing to wait for.
//
// SH registers set by this queue are kept per queue, as each pipe holds its own, and also
// written to the register file, where the host can read them.
#pragma once
#include <unordered_map>

#include "drivers/emu/queue_engine.hpp"

namespace tg::emu {

class pm4_engine final : public queue_engine {
 public:
  // bank: the HQD's GRBM_GFX_CNTL selection, where its registers live.
  pm4_engine(gpu_core& core, std::uint32_t bank, const ring_config& ring);

 private:
  outcome execute(packet& p) override;
  void publish_pointers(std::uint64_t rptr, std::uint64_t wptr) override;

  outcome set_registers(packet& p, std::size_t dwords, std::uint32_t window_first, std::uint32_t window_end,
                        const char* name);
  outcome wait_reg_mem(packet& p);
  outcome release_mem(packet& p);
  outcome indirect_buffer(packet& p);
  outcome dispatch_direct(packet& p);
  outcome interpret(gpu_va program, std::array<std::uint32_t, 3> groups);  // drivers/emu/shader
  std::uint32_t sh(std::uint32_t index) const;

  std::unordered_map<std::uint32_t, std::uint32_t> sh_;
};

}  // namespace tg::emu
