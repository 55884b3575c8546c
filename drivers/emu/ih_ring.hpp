// ih_ring.hpp: the emulated interrupt handler's ring 0 (OSSSYS IH; tinygrad/runtime/support/am/ip.py; gfx_v11_0.c), fed with the GC
// hub's page faults.
//
// Once the driver has programmed IH_RB_BASE(_HI) (MC address >> 8), IH_RB_CNTL (RB_ENABLE, RB_SIZE
// = log2 of the ring in dwords) and optionally IH_RB_WPTR_ADDR_LO/HI (where the write pointer is
// written back), every fault the MMU raises becomes a 32-byte entry at IH_RB_WPTR: DW0 client id
// 0x0A (SOC21_IH_CLIENTID_GFX, the GC hub's UTCL2), source id 0 (UTCL2_1_0__SRCID__FAULT), ring 0,
// vmid 0, GFX hub; DW1/DW2 the 100 MHz timestamp; DW3 pasid 0; DW4 = VA >> 12 and DW5 bits 3:0 =
// VA bits 47:44, bit 5 = write, as gmc_v11_0_process_interrupt decodes them. IH_RB_WPTR then holds
// the new byte offset (OFFSET, bits 17:2), written back as the same 32-bit value.
//
// A ring with no room (the next write pointer would reach IH_RB_RPTR) drops the entry and sets
// IH_RB_WPTR.RB_OVERFLOW (when WPTR_OVERFLOW_ENABLE is set); a write of IH_RB_CNTL with
// WPTR_OVERFLOW_CLEAR clears it (the clear bit is a pulse). A ring outside VRAM gets nothing.
//
// Not thread-safe: the gpu calls it under its lock.
#pragma once
#include <cstdint>

#include "drivers/emu/gpu_core.hpp"

namespace tg::emu {

struct ih_stats {
  std::uint64_t entries = 0, dropped = 0;
};

class ih_ring {
 public:
  static constexpr std::uint32_t entry_bytes = 32;
  static constexpr std::uint32_t client_gfx = 0x0A, source_utcl2_fault = 0;

  explicit ih_ring(gpu_core& core) : core_(core) {}

  void install();  // IH_RB_CNTL's overflow clear
  void post_fault(const fault_event& fault);
  ih_stats stats() const { return stats_; }

 private:
  void write_back(std::uint32_t wptr);

  gpu_core& core_;
  ih_stats stats_;
};

}  // namespace tg::emu
