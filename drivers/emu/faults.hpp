// faults.hpp: what the emulated GPU reports instead of crashing, and the interrupts it would raise.
//
// A queue that meets something it cannot do (an unmapped address, an unknown packet opcode, an
// instruction the shader interpreter cannot run) records a fault_record and halts at that packet (its read
// pointer stays on it; inside an IB, on the INDIRECT_BUFFER's successor), as a hung queue does on
// hardware; the host sees its signal never arrive, then reads gpu::faults(). Page faults also latch the GC hub's fault status and address registers
// (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c) and, once the driver set up IH ring 0, are written there as UTCL2 entries
// (ih_ring.hpp). Other interrupts are not written to the ring: interrupt_record lists them.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/memory/address.hpp"

namespace tg::emu {

using memory::gpu_va;

enum class engine_id : std::uint8_t { compute, sdma };

enum class fault_kind : std::uint8_t {
  page_fault,       // an access the MMU could not translate (address = the VA)
  bad_packet,       // unknown opcode, bad field, packet straddling the SDMA ring end
  shader_error,     // interpreted code the interpreter cannot run (address = the PC; drivers/emu/shader)
  bad_queue_setup,  // registers that cannot describe a queue (no doorbell, ring size out of range)
  protocol,         // the host broke the ring protocol: overrun, write pointer going back, stale shadow
};

struct fault_record {
  fault_kind kind;
  engine_id engine;
  std::uint32_t queue = 0;      // compute: the HQD bank (GRBM_GFX_CNTL ME/pipe/queue bits); SDMA: 0
  gpu_va packet_va;             // the packet's first dword
  std::uint64_t stream_offset = 0;  // bytes from the start of the ring (or of the IB, when in_ib)
  bool in_ib = false;
  std::uint32_t header = 0;     // the packet's first dword
  gpu_va address;               // page_fault: the faulting VA; shader_error: the PC
  bool write = false;           // page_fault: a write access
  std::string message;
};

std::string describe(const fault_record& f);

enum class interrupt_source : std::uint8_t {
  cp_end_of_pipe,  // RELEASE_MEM with INT_SEL != 0 (gfx_v11_0.c: gfx_v11_0_ring_emit_fence)
  sdma_trap,       // SDMA TRAP (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c; IH source 49 on gfx11/12)
};

struct interrupt_record {
  interrupt_source source;
  std::uint32_t context = 0;  // RELEASE_MEM's INT_CTXID / TRAP's INT_CONTEXT
};

}  // namespace tg::emu
