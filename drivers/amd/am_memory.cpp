// am_memory.cpp: VRAM partition, allocations and mappings (see am_memory.hpp).
#include "drivers/amd/am_memory.hpp"

#include <algorithm>
#include <bit>

#include <tg/core/error.hpp>

namespace tg::amd {

namespace {
constexpr std::uint64_t page = 4096, big_page = 2ull << 20;
std::uint64_t round_up(std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; }
}  // namespace

// Carries a shadow's bytes to and from VRAM through BAR0 (bounded writes, am_context::write_vram).
class am_memory::bar_mirror final : public queue::memory_mirror {
 public:
  bar_mirror(am_context& c, std::span<std::byte> shadow, memory::gpu_pa pa) : c_(c), shadow_(shadow), pa_(pa) {}
  void push(std::span<const std::byte> b) override { c_.write_vram(at(b.data()), b); }
  void pull(std::span<std::byte> b) override { c_.read_vram(at(b.data()), b); }

 private:
  memory::gpu_pa at(const std::byte* p) const { return pa_ + std::uint64_t(p - shadow_.data()); }
  am_context& c_;
  std::span<std::byte> shadow_;
  memory::gpu_pa pa_;
};

am_memory::am_memory(am_context& c, memory::tlb_invalidator& tlb)
    : c_(c), bar0_(c.t.bar(0).size()), mapping_(c.t.bar(0).mapping()), vram_(c), vas_(va_base, va_size) {
  const std::uint64_t vram = c.disc.vram_bytes, boot_end = c.boot.state().base() + c.boot.state().size_bytes();
  if (vram < boot_end + reserved_tail + (16ull << 20))
    throw device_error(str(c.name(), ": ", vram >> 20, " MiB of VRAM is too small for the AM driver's partition"));
  const std::uint64_t managed_end = vram - reserved_tail;
  std::uint64_t heap_start = boot_end;
  if (bar0_ < vram) {  // small BAR: the CPU writes PTEs through BAR0, so tables sit low (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)
    const std::uint64_t pool = round_up(vram / 512, 1ull << 20);
    pool_.emplace(memory::gpu_pa{boot_end}, pool);
    heap_start += pool;
  }
  const std::uint64_t visible_end = std::min(bar0_, managed_end) / page * page;
  if (visible_end > heap_start) visible_.emplace(memory::gpu_pa{heap_start}, visible_end - heap_start);
  if (managed_end > std::max(visible_end, heap_start)) {
    const std::uint64_t from = std::max(visible_end, heap_start);
    hidden_.emplace(memory::gpu_pa{from}, managed_end - from);
  }
  memory::vram_allocator& tables = pool_ ? *pool_ : *visible_;
  pt_ = std::make_unique<memory::page_table>(c.gen, va_base, va_size, tables, vram_, tlb);
}

am_memory::~am_memory() = default;

memory::vram_allocator& am_memory::heap_of(memory::gpu_pa pa) {
  if (visible_ && pa.value < visible_->state().base() + visible_->state().size_bytes() &&
      pa.value >= visible_->state().base())
    return *visible_;
  return *hidden_;
}

std::uint64_t am_memory::heap_free_bytes() const {
  return (visible_ ? visible_->free_bytes() : 0) + (hidden_ ? hidden_->free_bytes() : 0);
}

// A PTB (one 4 KiB table) maps 2 MiB with 4 KiB pages, a PDB0 1 GiB, a PDB1 512 GiB
// (page_table.hpp). Mapping n fresh bytes creates at most one PTB per 2 MiB they touch and one
// PDB0 per GiB, plus a partly used table at each end of each run of VA; `runs` bounds the runs.
std::uint64_t am_memory::allocatable_bytes() const {
  constexpr std::uint64_t runs = 64;
  const std::uint64_t free = heap_free_bytes();
  auto tables_for = [](std::uint64_t bytes) {
    return (bytes / big_page + bytes / (1ull << 30) + 2 * runs) * page;
  };
  if (!pool_) return free > tables_for(free) ? free - tables_for(free) : 0;
  const std::uint64_t pool_tables = pool_->free_bytes() / page;
  const std::uint64_t mappable = pool_tables > 2 * runs ? (pool_tables - 2 * runs) * big_page : 0;
  return std::min(free, mappable);
}

allocation am_memory::allocate(std::uint64_t bytes, bool cpu_visible, std::uint64_t align) {
  if (bytes == 0) throw usage_error(str(c_.name(), ": allocate of 0 bytes"));
  bytes = round_up(bytes, page);
  align = std::max(align, page);
  const std::uint64_t phys_align = bytes >= big_page ? std::max(align, big_page) : align;
  std::optional<memory::gpu_pa> pa;
  // Invisible memory first for buffers the CPU never maps, so BAR0 space stays for those that do.
  if (!cpu_visible && hidden_) pa = hidden_->try_allocate(bytes, phys_align);
  if (!pa && visible_) pa = visible_->try_allocate(bytes, phys_align);
  if (!pa)
    throw device_error(str(c_.name(), ": out of VRAM: ", bytes, " bytes", cpu_visible ? " inside BAR0" : "",
                           " requested, ", heap_free_bytes(), " bytes free (fragmentation may leave less in one piece)"));
  allocation a{{}, *pa, bytes, pa->value + bytes <= bar0_};
  try {
    a.va = vas_.allocate(bytes, std::max(align, phys_align));
  } catch (...) {
    heap_of(a.pa).free(a.pa);
    throw;
  }
  try {
    pt_->map(a.va, memory::phys_chunk{a.pa, bytes}, {});  // all-or-nothing; flushes the TLB
  } catch (...) {
    vas_.free(a.va);
    heap_of(a.pa).free(a.pa);
    throw;
  }
  return a;
}

void am_memory::release(const allocation& a) {
  shadows_.erase(a.va.value);
  pt_->unmap(a.va, a.bytes);  // flushes the TLB before the memory can be reused
  vas_.free(a.va);
  heap_of(a.pa).free(a.pa);
}

memory::gpu_va am_memory::map_system(std::span<const std::uint64_t> pages, std::uint64_t align) {
  if (pages.empty()) throw usage_error(str(c_.name(), ": map_system of no pages"));
  std::vector<memory::phys_chunk> chunks;
  for (std::uint64_t bus : pages) {  // merge runs of consecutive pages into one chunk
    if (!chunks.empty() && chunks.back().pa.value + chunks.back().size_bytes == bus) chunks.back().size_bytes += page;
    else chunks.push_back({memory::gpu_pa{bus}, page});
  }
  const std::uint64_t bytes = pages.size() * page;
  const memory::gpu_va va = vas_.allocate(bytes, std::max(align, page));
  try {
    pt_->map(va, chunks, {.location = memory::page_location::system, .snooped = true, .uncached = true});
  } catch (...) {
    vas_.free(va);
    throw;
  }
  return va;
}

void am_memory::unmap_system(memory::gpu_va va, std::uint64_t bytes) {
  pt_->unmap(va, bytes);
  vas_.free(va);
}

queue::queue_memory am_memory::host_memory(const allocation& a) {
  const memory::gpu_va va = a.va;
  if (mapping_ && a.pa.value + a.bytes <= bar0_) return {{mapping_ + a.pa.value, a.bytes}, va};
  if (!a.cpu_visible)
    throw usage_error(str(c_.name(), ": the allocation at VA ", hex{a.va.value},
                          " is not CPU-visible (allocate it with cpu_visible = true)"));
  shadow& s = shadows_[a.va.value];
  if (s.words.empty()) {
    s.words.assign(a.bytes / 8, 0);
    const std::span<std::byte> bytes = std::as_writable_bytes(std::span(s.words));
    // Zero, as the device's allocations start (reading it back over USB would cost a round trip per chunk).
    s.mirror = std::make_unique<bar_mirror>(c_, bytes, a.pa);
  }
  return {std::as_writable_bytes(std::span(s.words)), va, s.mirror.get()};
}

}  // namespace tg::amd
