// am_device_queues.cpp: the compute and SDMA queues of an am_device, their doorbells, fault
// reporting and recovery (see am_device.hpp).
#include <tg/core/error.hpp>

#include "drivers/amd/am_device.hpp"
#include "drivers/amd/am_scratch.hpp"

namespace tg::amd {

namespace {

constexpr std::uint64_t compute_doorbell = 0x18, sdma_doorbell = 0x800;  // tinygrad/runtime/support/am/ip.py; gfx_v11_0.c
// Where the pointer words and the timeline signal sit in a queue's 4 KiB page: compute follows
// HSA's amd_queue_t (ring.hpp); SDMA the reference's rptr 0, wptr 8.
constexpr std::size_t sdma_rptr_at = 0, sdma_wptr_at = 8, signal_at = 256;

// The doorbell protocol of tinygrad/runtime/support/am/ip.py; gfx_v11_0.c: HDP flush, so ring and shadow writes made through BAR0
// have reached VRAM, then one 64-bit store into BAR2.
class bar_doorbell final : public queue::doorbell {
 public:
  bar_doorbell(am_context& c, std::uint64_t offset) : c_(c), offset_(offset) {}
  void write64(std::uint64_t value) override {
    c_.io.flush_hdp();
    c_.t.bar(2).write64(offset_, value);
  }

 private:
  am_context& c_;
  std::uint64_t offset_;
};

}  // namespace

am_device::queue_parts am_device::make_parts(std::uint64_t ring_bytes, std::uint64_t doorbell, bool eop) {
  queue_parts p;
  p.ring = allocate(ring_bytes, true, 256);
  p.page = allocate(4096, true);
  if (eop) p.eop = allocate(4096);
  p.bell = std::make_unique<bar_doorbell>(ctx_, doorbell);
  return p;
}

void am_device::start_queues() {
  const bool usb = t_.kind() == transport::transport_kind::usb;
  // tinygrad/runtime/support/am/ip.py; gfx_v11_0.c, scaled down: PCI 1 MiB rings, USB an 8 KiB compute ring (every ring store is a
  // bridge message there), SDMA 1 MiB (a staged copy puts a few packets per chunk).
  const std::uint64_t compute_bytes = ctx_.opt.compute_ring_bytes ? ctx_.opt.compute_ring_bytes : usb ? 8 << 10 : 1 << 20;
  const std::uint64_t sdma_bytes = ctx_.opt.sdma_ring_bytes ? ctx_.opt.sdma_ring_bytes : 1 << 20;
  compute_parts_ = make_parts(compute_bytes, compute_doorbell, true);
  copy_parts_ = make_parts(sdma_bytes, sdma_doorbell, false);
  scratch_ = allocate(4096);  // a placeholder until a kernel asks for scratch (ensure_scratch)
  start_compute();
  start_copy();
  sdma_ready_ = true;  // from here on allocations are zeroed by SDMA
}

// The queue_compute first (made, or restarted empty after a failure: either zeroes the pointers),
// then the MQD and HQD.
void am_device::start_compute() {
  const queue::queue_memory page = mem_->host_memory(compute_parts_.page);
  const queue::ring_pointers ptrs = queue::pointers_in_page(page.slice(0, queue::pointer_page_bytes));
  if (compute_) compute_->restart();
  else compute_ = std::make_unique<queue::queue_compute>(queue::queue_compute_config{
      .ring = {.name = "compute0",
               .ring = mem_->host_memory(compute_parts_.ring),
               .rptr = ptrs.rptr,
               .wptr = ptrs.wptr,
               .bell = compute_parts_.bell.get(),
               .space_timeout = ctx_.opt.queue_timeout,
               .on_wait = [this] { check_faults("compute0"); }},
      .signal = page.slice(signal_at, queue::gpu_signal::size_bytes)});
  gfx_.start_queue({.ring_va = compute_parts_.ring.va.value,
                    .ring_bytes = compute_parts_.ring.bytes,
                    .rptr_va = ptrs.rptr.va.value,
                    .wptr_va = ptrs.wptr.va.value,
                    .eop_va = compute_parts_.eop.va.value,
                    .doorbell_offset = compute_doorbell});
}

void am_device::start_copy() {
  const queue::queue_memory page = mem_->host_memory(copy_parts_.page);
  const queue::queue_memory rptr = page.slice(sdma_rptr_at, 8), wptr = page.slice(sdma_wptr_at, 8);
  if (copy_) copy_->restart();
  else copy_ = std::make_unique<queue::queue_copy>(queue::queue_copy_config{
      .ring = {.name = "sdma0",
               .ring = mem_->host_memory(copy_parts_.ring),
               .rptr = rptr,
               .wptr = wptr,
               .bell = copy_parts_.bell.get(),
               .space_timeout = ctx_.opt.queue_timeout,
               .on_wait = [this] { check_faults("sdma0"); }},
      .signal = page.slice(signal_at, queue::gpu_signal::size_bytes)});
  sdma_.start_queue({.ring_va = copy_parts_.ring.va.value,
                     .ring_bytes = copy_parts_.ring.bytes,
                     .rptr_va = rptr.va.value,
                     .wptr_va = wptr.va.value,
                     .doorbell_offset = sdma_doorbell});
}

void am_device::check_faults(const std::string& queue_name) {
  std::optional<std::uint64_t> va;
  bool write = false;
  for (const ih_entry& e : ih_.drain())
    if (e.is_page_fault() && !va) va = e.fault_address(), write = e.is_write_fault();
  // The latched status as well: it is there even when the IH ring missed the entry (overflow).
  ip_registers& gc = *ctx_.gc;
  const char* status_reg = fault_status_register();
  const std::uint32_t status = gc.read(status_reg);
  if (status != 0) {
    const std::uint64_t page = std::uint64_t{gc.read("regGCVM_L2_PROTECTION_FAULT_ADDR_HI32")} << 32 |
                               gc.read("regGCVM_L2_PROTECTION_FAULT_ADDR_LO32");
    if (!va) va = page << 12, write = gc.field(status_reg, "RW").get(status);
    // Clear it so it cannot be reported twice, nor block the next warm boot (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
    gc.update("regGCVM_L2_PROTECTION_FAULT_CNTL", {{"CLEAR_PROTECTION_FAULT_STATUS_ADDR", 1}});
    gc.update("regGCVM_L2_PROTECTION_FAULT_CNTL", {{"CLEAR_PROTECTION_FAULT_STATUS_ADDR", 0}});
  }
  if (!va && ctx_.opt.emulator_faults) {
    const std::string emulated = ctx_.opt.emulator_faults();
    if (!emulated.empty())
      throw device_error(str(ctx_.name(), ": queue ", queue_name, " stopped: the emulated GPU reports ", emulated));
  }
  if (!va) return;
  throw device_error(str(ctx_.name(), ": queue ", queue_name, ": GPU page fault at VA ", hex{*va}, " (",
                         write ? "write" : "read", ", ", status_reg + 3, " = ", hex{status},
                         "); the queue is stopped until the driver recovers it"));
}

void am_device::synchronize(std::chrono::milliseconds timeout) {
  compute_->synchronize(timeout);
  copy_->synchronize(timeout);
  check_faults("compute0 or sdma0");  // a fault that blocked no wait is still an error to report
}

void am_device::recover_compute() {
  ctx_.progress("recover compute0");
  gfx_.reset_mec();
  start_compute();
  ++recoveries_;
}

void am_device::recover_copy() {
  ctx_.progress("recover sdma0");
  sdma_.stop_queue();
  start_copy();
  ++recoveries_;
}

}  // namespace tg::amd

namespace tg::amd {

void am_device::ensure_scratch(std::uint32_t private_bytes) {
  if (private_bytes == 0 || private_bytes <= scratch_lane_bytes_) return;
  if (!ctx_.disc.gc)
    throw device_error(str(ctx_.name(), ": a kernel needs ", private_bytes,
                           " bytes of scratch per work-item, but discovery has no GC info to size it from"));
  const scratch_size s = size_scratch(*ctx_.disc.gc, private_bytes);
  const std::uint32_t tmpring = s.tmpring(ctx_.gc->table());
  allocation grown = allocate(s.bytes, false, 256);  // first: a failure keeps the old area
  try {
    compute_->synchronize(ctx_.opt.queue_timeout);  // dispatches queued before may still use the old area
  } catch (...) {
    release(grown);
    throw;
  }
  release(scratch_);
  scratch_ = grown;
  tmpring_size_ = tmpring;
  scratch_lane_bytes_ = s.lane_bytes;
  ctx_.progress(str("scratch: ", s.bytes >> 10, " KiB, ", s.lane_bytes, " bytes per lane"));
}

}  // namespace tg::amd
