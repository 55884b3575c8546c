// sdma_packet_size.hpp: where one SDMA packet ends, so a ring can keep every packet contiguous.
//
// Lengths are the generated fixed sizes (sdma_gen.hpp, from sdma_v6_0_0_pkt_open.h) plus the
// counted tails of NOP (HEADER.count extra dwords) and WRITE_UNTILED (DW_3.count + 1 data dwords).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace tg::queue::sdma {

// Dwords of the packet that starts at words[0]. Throws usage_error for an op the table lacks or a
// packet longer than `words`.
std::size_t packet_dwords(std::span<const std::uint32_t> words);

}  // namespace tg::queue::sdma
