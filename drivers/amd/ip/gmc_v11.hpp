// gmc_v11.hpp: the GMC hubs of gfx11 / gfx12 (GFXHUB 3 / 12, MMHUB 3 / 4.1): VM_CONTEXT0 over our
// page tables (gc_11_0_0_sh_mask.h; gc_12_0_0_sh_mask.h values) and the TLB flush after every page-table change (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c).
//
// One code path for both generations: registers and fields are looked up by name in the
// generation's generated table (gc_11_0_0 / gc_12_0_0, mmhub_3_0_0 / mmhub_4_1_0), which is
// where their positions differ (e.g. CONTEXT0_CNTL.PAGE_TABLE_BLOCK_SIZE, gc_11_0_0_sh_mask.h; gc_12_0_0_sh_mask.h).
//
//   tg::amd::gmc_v11 gmc(ctx);
//   gmc.init_hub(tg::amd::hub::mm, pt.root_table(), va_base, va_size, memscratch, dummy);
//   gmc.invalidate_tlb(va, bytes);  // memory::tlb_invalidator: MM hub, then GC hub once enabled
//
// Not thread-safe.
#pragma once
#include <cstdint>

#include "drivers/amd/am_context.hpp"
#include "runtime/memory/tlb_invalidator.hpp"

namespace tg::amd {

enum class hub { gc, mm };

class gmc_v11 final : public memory::tlb_invalidator {
 public:
  explicit gmc_v11(am_context& c) : c_(c) {}

  // Programs one hub's apertures, L2 and VM_CONTEXT0 (gc_11_0_0_sh_mask.h; gc_12_0_0_sh_mask.h) for a page table rooted at
  // `root` covering [va_base, va_base + va_bytes).
  void init_hub(hub h, memory::gpu_pa root, std::uint64_t va_base, std::uint64_t va_bytes, memory::gpu_pa memscratch,
                memory::gpu_pa dummy_page);
  // The GC hub is flushed only once GFX init programmed it (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c).
  void set_gc_hub_ready(bool ready) { gc_ready_ = ready; }

  // memory::tlb_invalidator: HDP flush, then engine 17 of each initialised hub for VMID 0.
  void invalidate_tlb(memory::gpu_va first, std::uint64_t size_bytes) override;
  void flush(hub h);
  std::uint64_t flushes() const { return flushes_; }

 private:
  ip_registers& regs(hub h) { return h == hub::gc ? *c_.gc : *c_.mmhub; }
  am_context& c_;
  bool gc_ready_ = false;
  std::uint64_t flushes_ = 0;
};

}  // namespace tg::amd
