// cmd_buffer.hpp: the dword buffer that PM4 and SDMA emitters append to, and the GPU address type they take.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/memory/address.hpp"

namespace tg::queue {

// Packets are little-endian dwords; emitters append to the end and never reorder.
using cmd_buffer = std::vector<std::uint32_t>;

// GPU addresses are runtime/memory's gpu_va (one type for the allocator, the page tables and
// the packets); queue code names it unqualified.
using memory::gpu_va;

}  // namespace tg::queue
