// emu_driver.hpp: brings up an emulated gfx11 / gfx12 GPU the way the AMD driver brings up real
// hardware, and runs runtime/queue's queues on it.
//
// Only the emulator's hardware interfaces are used: VRAM through the BAR (gpu::vram), registers,
// doorbells. Bring-up: VRAM split into a page-table pool and a data heap (TLSF), VMID 0 page
// tables in VRAM (GMMU on, VM_CONTEXT0 registers), the hub TLB flush after every change
// (emu_driver_tlb.hpp), a PM4 compute queue on MEC1 pipe 0 queue 0 and the SDMA0 queue, each a
// ring in VRAM mapped into the GPU VA space with its doorbell in the doorbell page. The
// emulator's worker thread runs the engines, so host waits make progress as on hardware.
//
// Faults: every host wait polls gpu::faults() (the wait hook, about every 100 ms) and throws a
// device_error naming the queue, the fault kind and the faulting address, so a page fault
// surfaces long before the hang timeout; the queue is then failed (queue_compute.hpp).
// Recovery (recover_compute / recover_copy) is what the driver does after that: dequeue the
// hardware queue, start a fresh queue object on the same ring memory (pointers and timeline back
// to 0) and activate the queue again. Work that was in the failed queue is dropped, not replayed;
// the next submission runs. Indirect buffers last submitted to the old queue must not be reused.
//
//   tg::emu::emu_driver d({.gen = tg::emu::gfx_gen::gfx12});
//   tg::emu::emu_allocation buf = d.allocate(4096);
//   d.compute().submit(commands);
//   d.synchronize(std::chrono::seconds(5));
//
// Not thread-safe: one host thread drives it (the emulator's worker is the other side).
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "drivers/emu/emu_driver_tlb.hpp"
#include "drivers/emu/gpu.hpp"
#include "memory/page_table.hpp"
#include "memory/va_allocator.hpp"
#include "memory/vram_allocator.hpp"
#include "runtime/queue/doorbell.hpp"
#include "runtime/queue/pm4.hpp"
#include "runtime/queue/queue_compute.hpp"
#include "runtime/queue/queue_copy.hpp"

namespace tg::emu {

struct emu_driver_config {
  gfx_gen gen = gfx_gen::gfx11;
  std::uint64_t vram_bytes = 256ull << 20;
  std::uint64_t page_table_bytes = 8ull << 20;      // the pool page tables come from
  std::uint64_t compute_ring_bytes = 8ull << 10;    // a power of two (CP_HQD_PQ_CONTROL.QUEUE_SIZE)
  std::uint64_t sdma_ring_bytes = 64ull << 10;      // a power of two (RB_CNTL.RB_SIZE)
  std::chrono::milliseconds space_timeout = queue::default_wait_timeout;  // ring back-pressure
};

// VRAM mapped into the GPU VA space; `host` is the CPU's view of it through the VRAM BAR.
struct emu_allocation {
  gpu_va va;
  gpu_pa pa;
  std::uint64_t bytes = 0;
  std::span<std::byte> host;

  queue::queue_memory memory() const { return {host, queue::gpu_va{va.value}}; }
};

// A doorbell store into the emulated doorbell page (BAR2); the worker thread notices it.
class emu_doorbell final : public queue::doorbell {
 public:
  emu_doorbell(gpu& g, std::uint64_t byte_offset) : g_(g), offset_(byte_offset) {}
  void write64(std::uint64_t value) override { g_.write_doorbell64(offset_, value); }

 private:
  gpu& g_;
  std::uint64_t offset_;
};

class emu_driver {
 public:
  static constexpr gpu_va va_base{std::uint64_t{1} << 45};  // the reference's VA window (facts 2.1)
  static constexpr std::uint64_t va_size = std::uint64_t{1} << 44;
  static constexpr std::uint64_t compute_doorbell = 0x18, sdma_doorbell = 0x800;  // facts 5.3

  explicit emu_driver(const emu_driver_config& config);
  ~emu_driver();  // stops the worker first, so no engine runs on memory being torn down
  emu_driver(const emu_driver&) = delete;
  emu_driver& operator=(const emu_driver&) = delete;

  gpu& device() { return gpu_; }
  gfx_gen gen() const { return gpu_.gen(); }
  queue::pm4::gfx_version gfx() const;

  // `bytes` (rounded up to 4 KiB) of VRAM at a fresh VA, mapped and TLB-flushed; zeroed.
  emu_allocation allocate(std::uint64_t bytes, std::uint64_t align = 4096);
  // Unmaps (TLB flush) and frees both the VA and the VRAM.
  void release(const emu_allocation& a);

  queue::queue_compute& compute() { return *compute_; }
  queue::queue_copy& copy() { return *copy_; }
  // 256-byte aligned scratch for dispatches (COMPUTE_DISPATCH_SCRATCH_BASE).
  gpu_va scratch() const { return scratch_.va; }

  // Waits for everything submitted to both queues. device_error (naming the queue) on a fault or
  // when a queue makes no progress for `timeout`.
  void synchronize(std::chrono::milliseconds timeout = queue::default_wait_timeout);

  // Throws device_error for a fault on `engine` not reported before. The queues' wait hook.
  void check_faults(engine_id engine);

  // After a failure: dequeue the hardware queue and start it again, empty, on the same memory.
  void recover_compute();
  void recover_copy();
  std::uint64_t recoveries() const { return recoveries_; }

 private:
  // The memory of one queue: ring, pointer page (read-pointer write-back, write-pointer shadow),
  // and the 16-byte timeline signal.
  struct queue_parts {
    emu_allocation ring, page;
    std::unique_ptr<emu_doorbell> bell;
  };
  void program_vm();
  queue_parts make_parts(std::uint64_t ring_bytes, std::uint64_t doorbell);
  void start_compute();  // new queue_compute, then the HQD registers
  void stop_compute();   // HQD dequeue
  void start_copy();     // new queue_copy, then the SDMA0 RB registers
  void stop_copy();      // RB_ENABLE = 0
  std::uint32_t rb_cntl(bool enable) const;
  std::vector<const fault_record*> faults_of(engine_id engine, const std::vector<fault_record>& all) const;
  void acknowledge_faults(engine_id engine);  // counts every fault so far as reported

  emu_driver_config config_;
  gpu gpu_;
  memory::vram_allocator tables_, heap_;
  memory::va_allocator vas_;
  emu_driver_tlb tlb_;
  memory::page_table pt_;
  queue_parts compute_parts_, copy_parts_;
  emu_allocation scratch_;
  std::unique_ptr<queue::queue_compute> compute_;
  std::unique_ptr<queue::queue_copy> copy_;
  std::size_t faults_reported_[2] = {0, 0};  // per engine_id: how many faults were thrown already
  std::uint64_t recoveries_ = 0;
};

}  // namespace tg::emu
