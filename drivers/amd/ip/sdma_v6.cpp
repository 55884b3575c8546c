// sdma_v6.cpp: SDMA block init and queue 0 (see sdma_v6.hpp).
#include "drivers/amd/ip/sdma_v6.hpp"

#include <bit>

#include <tg/core/error.hpp>

#include "drivers/amd/ip/nbio_doorbell.hpp"

namespace tg::amd {

void sdma_v6::hw_init() {
  ip_registers& gc = *c_.gc;
  gc.update("regSDMA0_WATCHDOG_CNTL", {{"QUEUE_HANG_COUNT", 100}});  // 10 s at 100 ms per unit
  gc.update("regSDMA0_UTCL1_CNTL", {{"RESP_MODE", 3}, {"REDO_DELAY", 9}});
  gc.update("regSDMA0_UTCL1_PAGE", {{"RD_L2_POLICY", 2}, {"WR_L2_POLICY", 3}});
  if (is_v7()) {
    gc.update("regSDMA0_MCU_CNTL", {{"HALT", 0}, {"RESET", 0}});
  } else {
    gc.update("regSDMA0_UTCL1_PAGE", {{"LLC_NOALLOC", 1}});
    gc.update("regSDMA0_F32_CNTL", {{"HALT", 0}, {"TH1_RESET", 0}});
  }
  gc.update("regSDMA0_CNTL", {{"TRAP_ENABLE", 1}});
}

void sdma_v6::start_queue(const sdma_queue_setup& q) {
  if (!std::has_single_bit(q.ring_bytes) || q.ring_bytes < 256 || q.ring_va % 256)
    throw usage_error(str(c_.name(), ": SDMA ring of ", q.ring_bytes, " bytes at VA ", hex{q.ring_va},
                          ": needs a power of two of at least 256 bytes, 256-byte aligned"));
  ip_registers& gc = *c_.gc;
  const queue::reg_table& t = gc.table();
  // The order of tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c: pointers, base, write-back and poll addresses, doorbell, RB_CNTL last.
  gc.write("regSDMA0_QUEUE0_MINOR_PTR_UPDATE", 1);
  for (const char* r : {"regSDMA0_QUEUE0_RB_RPTR", "regSDMA0_QUEUE0_RB_RPTR_HI", "regSDMA0_QUEUE0_RB_WPTR",
                        "regSDMA0_QUEUE0_RB_WPTR_HI"})
    gc.write(r, 0);
  gc.write64("regSDMA0_QUEUE0_RB_BASE", "regSDMA0_QUEUE0_RB_BASE_HI", q.ring_va >> 8);
  gc.write64("regSDMA0_QUEUE0_RB_RPTR_ADDR_LO", "regSDMA0_QUEUE0_RB_RPTR_ADDR_HI", q.rptr_va);
  gc.write64("regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO", "regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI", q.wptr_va);
  gc.write("regSDMA0_QUEUE0_DOORBELL_OFFSET",
           t.encode("regSDMA0_QUEUE0_DOORBELL_OFFSET", {{"OFFSET", std::uint32_t(q.doorbell_offset / 4)}}));
  gc.write_fields("regSDMA0_QUEUE0_DOORBELL", {{"ENABLE", 1}});
  gc.write("regSDMA0_QUEUE0_MINOR_PTR_UPDATE", 0);
  const auto rb_size = std::uint32_t(std::countr_zero(q.ring_bytes / 4));  // log2(ring dwords)
  gc.write_fields("regSDMA0_QUEUE0_RB_CNTL", {{"RB_SIZE", rb_size},
                                              {is_v7() ? "MCU_WPTR_POLL_ENABLE" : "F32_WPTR_POLL_ENABLE", 1},
                                              {"RPTR_WRITEBACK_ENABLE", 1},
                                              {"RPTR_WRITEBACK_TIMER", 4},
                                              {"RB_PRIV", 1},
                                              {"RB_ENABLE", 1}});
  gc.update("regSDMA0_QUEUE0_IB_CNTL", {{"IB_ENABLE", 1}});
  // The doorbell's route through NBIO (sdma_v6_0.c / sdma_v7_0.c: *_gfx_resume calls sdma_doorbell_range).
  nbio_sdma_doorbell_range(c_, q.doorbell_offset);
}

void sdma_v6::stop_queue() {
  ip_registers& gc = *c_.gc;
  gc.update("regSDMA0_QUEUE0_RB_CNTL", {{"RB_ENABLE", 0}});
  gc.update("regSDMA0_QUEUE0_IB_CNTL", {{"IB_ENABLE", 0}});
  gc.write_fields("regSDMA0_QUEUE0_DOORBELL", {{"ENABLE", 0}});
  gc.write("regSDMA0_QUEUE0_DOORBELL_OFFSET", 0);
}

}  // namespace tg::amd
