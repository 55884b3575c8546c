// emu_driver.cpp: bring-up, memory and fault reporting of the emulated GPU's driver (see
// emu_driver.hpp); the queues are set up in emu_driver_queues.cpp.
#include "drivers/emu/emu_driver.hpp"

#include <algorithm>
#include <cstring>

#include <tg/error.hpp>

namespace tg::emu {

namespace {
constexpr std::uint64_t page_bytes = 4096;
std::uint64_t round_up(std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; }
const char* engine_name(engine_id e) { return e == engine_id::compute ? "compute0" : "sdma0"; }
}  // namespace

emu_driver::emu_driver(const emu_driver_config& config)
    : config_(config), gpu_({.gen = config.gen, .vram_bytes = config.vram_bytes}),
      tables_(gpu_pa{0}, config.page_table_bytes),
      heap_(gpu_pa{config.page_table_bytes}, config.vram_bytes - config.page_table_bytes), vas_(va_base, va_size),
      tlb_(gpu_), pt_(config.gen, va_base, va_size, tables_, gpu_.vram(), tlb_) {
  program_vm();
  compute_parts_ = make_parts(config.compute_ring_bytes, compute_doorbell);
  copy_parts_ = make_parts(config.sdma_ring_bytes, sdma_doorbell);
  scratch_ = allocate(page_bytes);
  start_compute();
  start_copy();
  gpu_.start();
}

emu_driver::~emu_driver() { gpu_.stop(); }

queue::pm4::gfx_version emu_driver::gfx() const {
  return gen() == gfx_gen::gfx11 ? queue::pm4::gfx_version::gfx11 : queue::pm4::gfx_version::gfx12;
}

// VM_CONTEXT0 as the driver programs it (facts 2.1, 2.3): root table (valid bit), VA window in pages.
void emu_driver::program_vm() {
  const gc_registers& r = gpu_.chip().gc_reg;
  const std::uint64_t base = pt_.root_table().value | 1, start = va_base.value >> 12,
                      end = (va_base.value + va_size - 1) >> 12;
  gpu_.write_register(r.vm_pt_base_lo, std::uint32_t(base));
  gpu_.write_register(r.vm_pt_base_hi, std::uint32_t(base >> 32));
  gpu_.write_register(r.vm_pt_start_lo, std::uint32_t(start));
  gpu_.write_register(r.vm_pt_start_hi, std::uint32_t(start >> 32));
  gpu_.write_register(r.vm_pt_end_lo, std::uint32_t(end));
  gpu_.write_register(r.vm_pt_end_hi, std::uint32_t(end >> 32));
  tlb_.flush();
}

emu_allocation emu_driver::allocate(std::uint64_t bytes, std::uint64_t align) {
  if (bytes == 0) throw usage_error("emu driver: allocate of 0 bytes");
  bytes = round_up(bytes, page_bytes);
  align = std::max(align, page_bytes);
  // Physically contiguous, so one chunk maps it; 2 MiB alignment lets big buffers use 2 MiB leaves.
  const std::uint64_t phys_align = bytes >= (2ull << 20) ? (2ull << 20) : align;
  emu_allocation a;
  a.bytes = bytes;
  a.pa = heap_.allocate(bytes, phys_align);
  try {
    a.va = vas_.allocate(bytes, std::max(align, phys_align));
  } catch (...) {
    heap_.free(a.pa);
    throw;
  }
  try {
    pt_.map(a.va, memory::phys_chunk{a.pa, bytes}, {});  // all-or-nothing; flushes the TLB
  } catch (...) {
    vas_.free(a.va);
    heap_.free(a.pa);
    throw;
  }
  a.host = {gpu_.vram().at(a.pa, bytes), bytes};
  std::memset(a.host.data(), 0, bytes);  // no stale data from an earlier owner
  return a;
}

void emu_driver::release(const emu_allocation& a) {
  pt_.unmap(a.va, a.bytes);  // flushes the TLB before the memory can be reused
  vas_.free(a.va);
  heap_.free(a.pa);
}

void emu_driver::synchronize(std::chrono::milliseconds timeout) {
  compute_->synchronize(timeout);
  copy_->synchronize(timeout);
  // A fault that did not block a wait (a rejected doorbell, say) is still a driver bug to report.
  check_faults(engine_id::compute);
  check_faults(engine_id::sdma);
}

void emu_driver::check_faults(engine_id engine) {
  const std::vector<fault_record> all = gpu_.faults();
  const std::vector<const fault_record*> mine = faults_of(engine, all);
  std::size_t& reported = faults_reported_[static_cast<int>(engine)];
  if (mine.size() < reported) reported = 0;  // someone cleared the log
  if (mine.size() == reported) return;
  const fault_record& f = *mine[reported];
  const std::size_t more = mine.size() - reported - 1;
  reported = mine.size();
  throw device_error(str("queue ", engine_name(engine), ": GPU fault at address ", f.address, " (", describe(f), ")",
                         more ? str(" and ", more, " more") : std::string{},
                         "; the queue is stopped until the driver recovers it"));
}

std::vector<const fault_record*> emu_driver::faults_of(engine_id engine, const std::vector<fault_record>& all) const {
  std::vector<const fault_record*> mine;
  for (const fault_record& f : all)
    if (f.engine == engine) mine.push_back(&f);
  return mine;
}

void emu_driver::acknowledge_faults(engine_id engine) {
  faults_reported_[static_cast<int>(engine)] = faults_of(engine, gpu_.faults()).size();
}

}  // namespace tg::emu
