// emu_driver_tlb.cpp: the hub TLB flush (see emu_driver_tlb.hpp).
#include "drivers/emu/emu_driver_tlb.hpp"

#include <tg/error.hpp>

namespace tg::emu {

namespace {
// VM_INVALIDATE_ENG0_REQ for VMID 0: every level of the tables, flush type 0 (facts 2.7 step b).
constexpr std::uint32_t invalidate_vmid0 = 0x00F80001;
// Reads before a missing ack is a hang: the emulator acks on the write, hardware within microseconds.
constexpr int max_polls = 1000;
}  // namespace

void emu_driver_tlb::flush() {
  const personality& c = g_.chip();
  // HDP flush first, so table writes made through the BAR have reached VRAM (facts 2.7 step a).
  g_.write_register(g_.read_register(c.nbio_reg.remap_hdp_mem_flush_cntl) / 4, 0);
  poll(c.mm_reg.inv_sem, 1, "MM hub invalidation semaphore");
  g_.write_register(c.mm_reg.inv_req, invalidate_vmid0);
  poll(c.mm_reg.inv_ack, 1, "MM hub invalidation ack");
  g_.write_register(c.mm_reg.inv_sem, 0);
  g_.write_register(c.gc_reg.vm_inv_req, invalidate_vmid0);
  poll(c.gc_reg.vm_inv_ack, 1, "GC hub invalidation ack");
  ++flushes_;
}

void emu_driver_tlb::poll(std::uint32_t reg, std::uint32_t bit, const char* what) {
  for (int i = 0; i < max_polls; ++i)
    if (g_.read_register(reg) & bit) return;
  throw device_error(str("emu driver: TLB flush: the ", what, " (register ", memory::hex{reg}, ") never showed bit ",
                         bit, " after ", max_polls, " reads"));
}

}  // namespace tg::emu
