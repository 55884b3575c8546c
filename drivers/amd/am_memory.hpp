// am_memory.hpp: the VRAM and GPU virtual addresses of one booted GPU: the VRAM partition (after
// tinygrad amdev.py AMMemoryManager), the VMID 0 page tables (memory::page_table in VRAM, written through BAR0), the VA window
// the emulator's driver uses (2^45, 16 TiB; tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c), and the CPU's view of CPU-visible memory.
//
// Partition: boot (am_context::boot, the first 32 MiB) | page-table pool, round_up(VRAM / 512, 1 MiB),
// only when BAR0 < VRAM | a BAR-visible heap up to the end of BAR0 | the rest up to VRAM - 64 MiB
// (the firmware's reserved tail). With a large BAR the tables come from the visible heap.
//
//   tg::amd::am_memory mem(ctx, gmc);
//   tg::amd::allocation a = mem.allocate(1 << 20, /*cpu_visible=*/true);
//   tg::queue::queue_memory q = mem.host_memory(a);  // BAR mapping, or a shadow mirrored over BAR0
//
// Not thread-safe: the device serialises calls.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "drivers/amd/am_context.hpp"
#include "runtime/memory/page_table.hpp"
#include "runtime/memory/va_allocator.hpp"
#include "runtime/queue/queue_memory.hpp"

namespace tg::amd {

// VRAM mapped into the GPU VA space (physically contiguous).
struct allocation {
  memory::gpu_va va;
  memory::gpu_pa pa;
  std::uint64_t bytes = 0;
  bool cpu_visible = false;  // inside BAR0
};

class am_memory {
 public:
  static constexpr memory::gpu_va va_base{std::uint64_t{1} << 45};
  static constexpr std::uint64_t va_size = std::uint64_t{1} << 44;
  static constexpr std::uint64_t reserved_tail = 64ull << 20;  // tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c

  am_memory(am_context& c, memory::tlb_invalidator& tlb);
  ~am_memory();

  // Mapped, not zeroed (the device zeroes). align 0: 4 KiB; >= 2 MiB sizes get 2 MiB physical
  // alignment so the tables can use 2 MiB leaves.
  allocation allocate(std::uint64_t bytes, bool cpu_visible, std::uint64_t align = 0);
  void release(const allocation& a);
  // System pages (bus addresses, 4 KiB each) at a fresh VA aligned to `align`, uncached and
  // snooped (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c).
  memory::gpu_va map_system(std::span<const std::uint64_t> page_bus_addresses, std::uint64_t align = 4096);
  void unmap_system(memory::gpu_va va, std::uint64_t bytes);

  // The CPU's view of a cpu_visible allocation for runtime/queue: the BAR0 mapping when there is
  // one, else a host shadow whose mirror pushes and pulls through BAR0 (USB).
  queue::queue_memory host_memory(const allocation& a);

  memory::page_table& tables() { return *pt_; }
  std::uint64_t bar0_bytes() const { return bar0_; }
  bool bar0_mapped() const { return mapping_ != nullptr; }
  std::byte* bar0_mapping() const { return mapping_; }
  std::uint64_t heap_free_bytes() const;
  // heap_free_bytes less the page tables that mapping all of it with 4 KiB pages could create
  // when the tables come from the heap (large BAR); with a separate pool, at most what the pool's
  // free tables can map. What a planner compares its needs with (backend::free_bytes).
  std::uint64_t allocatable_bytes() const;

 private:
  class bar_mirror;
  struct shadow {
    std::vector<std::uint64_t> words;  // 8-byte aligned for the queue's atomic words
    std::unique_ptr<bar_mirror> mirror;
  };
  memory::vram_allocator& heap_of(memory::gpu_pa pa);

  am_context& c_;
  std::uint64_t bar0_ = 0;
  std::byte* mapping_ = nullptr;
  bar_vram_access vram_;
  std::optional<memory::vram_allocator> pool_, visible_, hidden_;
  memory::va_allocator vas_;
  std::unique_ptr<memory::page_table> pt_;
  std::map<std::uint64_t, shadow> shadows_;  // by VA of the allocation
};

}  // namespace tg::amd
