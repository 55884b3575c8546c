// emu_driver_queues.cpp: the compute (MEC1 pipe 0 queue 0) and SDMA0 queues of emu_driver, set up
// and torn down through registers as facts 4.11 and 5.4 describe (see emu_driver.hpp).
#include "drivers/emu/emu_driver.hpp"

#include <bit>

#include <tg/error.hpp>

namespace tg::emu {

namespace {
// Where the pointer words and the timeline signal sit in a queue's 4 KiB page. Compute follows
// HSA's amd_queue_t (ring.hpp: wptr at 56, rptr at 128); SDMA the reference's rptr 0, wptr 8.
constexpr std::size_t sdma_rptr_at = 0, sdma_wptr_at = 8;
constexpr std::size_t signal_at = 256;
}  // namespace

emu_driver::queue_parts emu_driver::make_parts(std::uint64_t ring_bytes, std::uint64_t doorbell) {
  if (!std::has_single_bit(ring_bytes) || ring_bytes < 256)
    throw usage_error(str("emu driver: a ring of ", ring_bytes, " bytes; it must be a power of two of at least 256"));
  queue_parts p;
  p.ring = allocate(ring_bytes);
  p.page = allocate(4096);
  p.bell = std::make_unique<emu_doorbell>(gpu_, doorbell);
  return p;
}

// ---- compute: a queue_compute first (it zeroes the pointers), then the HQD registers.

void emu_driver::start_compute() {
  const queue::queue_memory page = compute_parts_.page.memory();
  const queue::ring_pointers ptrs = queue::pointers_in_page(page.slice(0, queue::pointer_page_bytes));
  compute_ = std::make_unique<queue::queue_compute>(queue::queue_compute_config{
      .ring = {.name = "compute0",
               .ring = compute_parts_.ring.memory(),
               .rptr = ptrs.rptr,
               .wptr = ptrs.wptr,
               .bell = compute_parts_.bell.get(),
               .space_timeout = config_.space_timeout,
               .on_wait = [this] { check_faults(engine_id::compute); }},
      .signal = page.slice(signal_at, queue::gpu_signal::size_bytes)});

  const gc_registers& r = gpu_.chip().gc_reg;
  const queue::reg_table& t = *gpu_.chip().gc_table;
  const std::uint64_t ring_va = compute_parts_.ring.va.value, rptr_va = ptrs.rptr.va.value, wptr_va = ptrs.wptr.va.value;
  gpu_.write_register(r.grbm_gfx_cntl, t.encode("regGRBM_GFX_CNTL", {{"MEID", 1}}));  // MEC1 pipe 0 queue 0
  gpu_.write_register(r.hqd_pq_base, std::uint32_t(ring_va >> 8));
  gpu_.write_register(r.hqd_pq_base_hi, std::uint32_t(ring_va >> 40));
  gpu_.write_register(r.hqd_pq_rptr_report_addr, std::uint32_t(rptr_va));
  gpu_.write_register(r.hqd_pq_rptr_report_addr_hi, std::uint32_t(rptr_va >> 32));
  gpu_.write_register(r.hqd_pq_wptr_poll_addr, std::uint32_t(wptr_va));
  gpu_.write_register(r.hqd_pq_wptr_poll_addr_hi, std::uint32_t(wptr_va >> 32));
  gpu_.write_register(r.hqd_pq_doorbell_control, t.encode("regCP_HQD_PQ_DOORBELL_CONTROL",
                                                          {{"DOORBELL_OFFSET", compute_doorbell / 4}, {"DOORBELL_EN", 1}}));
  // QUEUE_SIZE is log2(ring dwords) - 1 (facts 5.4).
  const auto queue_size = std::uint32_t(std::countr_zero(compute_parts_.ring.bytes / 4)) - 1;
  gpu_.write_register(r.hqd_pq_control,
                      t.encode("regCP_HQD_PQ_CONTROL", {{"QUEUE_SIZE", queue_size}, {"RPTR_BLOCK_SIZE", 5}}));
  gpu_.write_register(r.hqd_pq_rptr, 0);
  gpu_.write_register(r.hqd_pq_wptr_lo, 0);
  gpu_.write_register(r.hqd_pq_wptr_hi, 0);
  gpu_.write_register(r.hqd_active, 1);
  gpu_.write_register(r.grbm_gfx_cntl, 0);
}

void emu_driver::stop_compute() {
  const gc_registers& r = gpu_.chip().gc_reg;
  const queue::reg_table& t = *gpu_.chip().gc_table;
  gpu_.write_register(r.grbm_gfx_cntl, t.encode("regGRBM_GFX_CNTL", {{"MEID", 1}}));
  gpu_.write_register(r.hqd_dequeue_request, 1);  // drain and deactivate (the emulator retires the engine)
  gpu_.write_register(r.grbm_gfx_cntl, 0);
}

void emu_driver::recover_compute() {
  stop_compute();
  compute_.reset();
  start_compute();
  acknowledge_faults(engine_id::compute);  // what happened before the reset was the old queue's
  ++recoveries_;
}

// ---- SDMA0: a queue_copy first, then the RB registers, RB_CNTL (with RB_ENABLE) last.

void emu_driver::start_copy() {
  const queue::queue_memory page = copy_parts_.page.memory();
  const queue::queue_memory rptr = page.slice(sdma_rptr_at, 8), wptr = page.slice(sdma_wptr_at, 8);
  copy_ = std::make_unique<queue::queue_copy>(queue::queue_copy_config{
      .ring = {.name = "sdma0",
               .ring = copy_parts_.ring.memory(),
               .rptr = rptr,
               .wptr = wptr,
               .bell = copy_parts_.bell.get(),
               .space_timeout = config_.space_timeout,
               .on_wait = [this] { check_faults(engine_id::sdma); }},
      .signal = page.slice(signal_at, queue::gpu_signal::size_bytes)});

  const sdma_registers& r = gpu_.chip().sdma_reg;
  const queue::reg_table& t = *gpu_.chip().gc_table;
  const std::uint64_t ring_va = copy_parts_.ring.va.value, rptr_va = rptr.va.value, wptr_va = wptr.va.value;
  gpu_.write_register(r.minor_ptr_update, 1);
  for (std::uint32_t reg : {r.rb_rptr, r.rb_rptr_hi, r.rb_wptr, r.rb_wptr_hi}) gpu_.write_register(reg, 0);
  gpu_.write_register(r.rb_base, std::uint32_t(ring_va >> 8));
  gpu_.write_register(r.rb_base_hi, std::uint32_t(ring_va >> 40));
  gpu_.write_register(r.rb_rptr_addr_lo, std::uint32_t(rptr_va));
  gpu_.write_register(r.rb_rptr_addr_hi, std::uint32_t(rptr_va >> 32));
  gpu_.write_register(r.rb_wptr_poll_addr_lo, std::uint32_t(wptr_va));
  gpu_.write_register(r.rb_wptr_poll_addr_hi, std::uint32_t(wptr_va >> 32));
  gpu_.write_register(r.doorbell_offset, t.encode("regSDMA0_QUEUE0_DOORBELL_OFFSET", {{"OFFSET", sdma_doorbell / 4}}));
  gpu_.write_register(r.doorbell, t.encode("regSDMA0_QUEUE0_DOORBELL", {{"ENABLE", 1}}));
  gpu_.write_register(r.minor_ptr_update, 0);
  gpu_.write_register(r.rb_cntl, rb_cntl(true));
}

// RB_CNTL for this ring; the write-pointer poll bit was renamed on gfx12 (MCU instead of F32).
std::uint32_t emu_driver::rb_cntl(bool enable) const {
  const queue::reg_table& t = *gpu_.chip().gc_table;
  const bool gfx12 = gen() == gfx_gen::gfx12;
  const auto rb_size = std::uint32_t(std::countr_zero(copy_parts_.ring.bytes / 4));  // log2(ring dwords)
  return t.encode("regSDMA0_QUEUE0_RB_CNTL", {{"RB_SIZE", rb_size},
                                              {gfx12 ? "MCU_WPTR_POLL_ENABLE" : "F32_WPTR_POLL_ENABLE", 1},
                                              {"RPTR_WRITEBACK_ENABLE", 1},
                                              {"RPTR_WRITEBACK_TIMER", 4},
                                              {"RB_PRIV", 1},
                                              {"RB_ENABLE", enable ? 1u : 0u}});
}

void emu_driver::stop_copy() { gpu_.write_register(gpu_.chip().sdma_reg.rb_cntl, rb_cntl(false)); }

void emu_driver::recover_copy() {
  stop_copy();
  copy_.reset();
  start_copy();
  acknowledge_faults(engine_id::sdma);
  ++recoveries_;
}

}  // namespace tg::emu
