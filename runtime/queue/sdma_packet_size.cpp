// sdma_packet_size.cpp: SDMA packet lengths (see sdma_packet_size.hpp).
#include "runtime/queue/sdma_packet_size.hpp"

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

#include "runtime/queue/sdma_gen.hpp"

namespace tg::queue::sdma {

std::size_t packet_dwords(std::span<const std::uint32_t> words) {
  if (words.empty()) throw usage_error("sdma: no packet in an empty stream");
  const std::uint32_t h = words[0];
  const auto op = std::uint8_t(SDMA_PKT_NOP_HEADER_op.get(h));
  const auto sub_op = std::int16_t(SDMA_PKT_NOP_HEADER_sub_op.get(h));
  const packet_layout* layout = nullptr;
  for (const packet_layout& l : packet_layouts)
    if (l.op == op && (l.sub_op < 0 || l.sub_op == sub_op)) layout = &l;
  if (layout == nullptr)
    throw usage_error(str("sdma: header ", hex{h}, " has op ", unsigned(op), " sub_op ", sub_op,
                          ", which tg does not encode; a ring cannot tell where the packet ends"));
  std::size_t len = layout->dwords;
  if (op == SDMA_OP_NOP) len += SDMA_PKT_NOP_HEADER_count.get(h);
  if (op == SDMA_OP_WRITE && words.size() > SDMA_PKT_WRITE_UNTILED_DW_3_count.dword)
    len += std::size_t(SDMA_PKT_WRITE_UNTILED_DW_3_count.get(words[SDMA_PKT_WRITE_UNTILED_DW_3_count.dword])) + 1;
  if (len > words.size())
    throw usage_error(str("sdma: ", layout->name, " packet of ", len, " dwords is cut off after ", words.size()));
  return len;
}

}  // namespace tg::queue::sdma
