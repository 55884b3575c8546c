// ih_v6.cpp: IH ring 0 set-up and draining (see ih_v6.hpp).
#include "drivers/amd/ip/ih_v6.hpp"

#include <bit>

namespace tg::amd {

ih_v6::ih_v6(am_context& c) : c_(c), ring_(c.boot_alloc(ring_bytes)), pointers_(c.boot_alloc(4096)) {}

void ih_v6::hw_init() {
  ip_registers& ih = *c_.osssys;
  const auto rb_size = std::uint32_t(std::countr_zero(ring_bytes / 4));  // log2(dwords): 16 for 256 KiB
  // Off while it is being pointed somewhere new; MC_SPACE 4 = the address is an MC address.
  const std::initializer_list<queue::field_value> cntl = {{"MC_SPACE", 4},        {"WPTR_OVERFLOW_CLEAR", 1},
                                                          {"RB_SIZE", rb_size},   {"MC_SNOOP", 1},
                                                          {"WPTR_OVERFLOW_ENABLE", 1}, {"RPTR_REARM", 1}};
  ih.write_fields("regIH_RB_CNTL", cntl);
  const std::uint64_t ring_mc = c_.mc(ring_), ptr_mc = c_.mc(pointers_);
  ih.write("regIH_RB_BASE", std::uint32_t(ring_mc >> 8));
  ih.write("regIH_RB_BASE_HI", std::uint32_t(ring_mc >> 40));
  ih.write("regIH_RB_WPTR_ADDR_LO", std::uint32_t(ptr_mc));
  ih.write("regIH_RB_WPTR_ADDR_HI", std::uint32_t(ptr_mc >> 32));
  ih.write("regIH_RB_WPTR", 0);
  ih.write("regIH_RB_RPTR", 0);
  ih.write_fields("regIH_DOORBELL_RPTR", {{"ENABLE", 0}});
  rptr_ = 0;
  ih.write_fields("regIH_RB_CNTL", {{"MC_SPACE", 4}, {"RB_SIZE", rb_size}, {"MC_SNOOP", 1},
                                    {"WPTR_OVERFLOW_ENABLE", 1}, {"RPTR_REARM", 1}, {"RB_ENABLE", 1},
                                    {"ENABLE_INTR", 1}});
}

std::vector<ih_entry> ih_v6::drain() {
  ip_registers& ih = *c_.osssys;
  const std::uint32_t wptr_reg = ih.read("regIH_RB_WPTR");
  const std::uint32_t wptr = ih.field("regIH_RB_WPTR", "OFFSET").get(wptr_reg) * 4 % ring_bytes;
  std::vector<ih_entry> out;
  for (; rptr_ != wptr; rptr_ = (rptr_ + 32) % ring_bytes) {
    ih_entry e;
    c_.read_vram(ring_ + rptr_, std::as_writable_bytes(std::span(e.dw)));
    out.push_back(e);
  }
  if (!out.empty()) ih.write_fields("regIH_RB_RPTR", {{"OFFSET", rptr_ / 4}});
  if (ih.field("regIH_RB_WPTR", "RB_OVERFLOW").get(wptr_reg)) {  // entries were lost; the pulse re-arms it
    ++overflows_;
    ih.update("regIH_RB_CNTL", {{"WPTR_OVERFLOW_CLEAR", 1}});
    ih.update("regIH_RB_CNTL", {{"WPTR_OVERFLOW_CLEAR", 0}});
  }
  return out;
}

}  // namespace tg::amd
