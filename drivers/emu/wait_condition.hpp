// wait_condition.hpp: the compare of PM4 WAIT_REG_MEM and SDMA POLL_REGMEM, evaluated.
#pragma once
#include <cstdint>

#include "runtime/queue/compare.hpp"

namespace tg::emu {

// Whether (value & mask) <func> reference holds; func is the packet's 3-bit FUNCTION field
// (compare.hpp: nvd.h's encoding, shared by SDMA). Returns false for 7, which is reserved:
// callers reject it first.
constexpr bool wait_condition_holds(std::uint32_t func, std::uint32_t value, std::uint32_t mask,
                                    std::uint32_t reference) {
  const std::uint32_t v = value & mask;
  switch (queue::compare(func)) {
    case queue::compare::always: return true;
    case queue::compare::less: return v < reference;
    case queue::compare::less_equal: return v <= reference;
    case queue::compare::equal: return v == reference;
    case queue::compare::not_equal: return v != reference;
    case queue::compare::greater_equal: return v >= reference;
    case queue::compare::greater: return v > reference;
  }
  return false;
}

static_assert(wait_condition_holds(5, 7, 0xFFFFFFFF, 7) && !wait_condition_holds(5, 6, 0xFFFFFFFF, 7));
static_assert(wait_condition_holds(3, 0xF0, 0x0F, 0));

}  // namespace tg::emu
