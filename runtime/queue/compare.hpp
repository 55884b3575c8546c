// compare.hpp: the compare function of PM4 WAIT_REG_MEM and SDMA POLL_REGMEM waits.
#pragma once
#include <cstdint>

namespace tg::queue {

// Wait until (value & mask) <op> reference. The encoding is nvd.h's comment under
// WAIT_REG_MEM_FUNCTION; SDMA POLL_REGMEM's func field uses the same values (3 is ==, 5 is >=;
// sdma_v6_0_ring_emit_pipeline_sync writes FUNC(3) /* equal */, tinygrad/runtime/ops_amd.py:
// AMDCopyQueue.wait passes WAIT_REG_MEM_FUNCTION_GEQ).
enum class compare : std::uint8_t {
  always = 0, less = 1, less_equal = 2, equal = 3, not_equal = 4, greater_equal = 5, greater = 6,
};

constexpr bool is_valid(compare c) { return static_cast<std::uint8_t>(c) <= 6; }

}  // namespace tg::queue
