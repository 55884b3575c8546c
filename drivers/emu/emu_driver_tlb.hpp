// emu_driver_tlb.hpp: the driver's TLB flush for the emulated GPU, as memory::page_table calls it.
//
// The sequence of facts 2.7 through MMIO: HDP flush, then the MM hub (semaphore, request, ack,
// release), then the GC hub, all for VMID 0. The page tables live in VRAM, so every map and unmap
// must be followed by this before an engine may use the range (the emulated TLB, like the real
// one, keeps stale translations until asked).
#pragma once
#include <cstdint>

#include "drivers/emu/gpu.hpp"
#include "memory/tlb_invalidator.hpp"

namespace tg::emu {

class emu_driver_tlb final : public memory::tlb_invalidator {
 public:
  explicit emu_driver_tlb(gpu& g) : g_(g) {}

  void invalidate_tlb(gpu_va, std::uint64_t) override { flush(); }
  void flush();
  std::uint64_t flushes() const { return flushes_; }

 private:
  // Waits (a bounded number of reads) for `bit` in `reg`; device_error naming the register.
  void poll(std::uint32_t reg, std::uint32_t bit, const char* what);

  gpu& g_;
  std::uint64_t flushes_ = 0;
};

}  // namespace tg::emu
