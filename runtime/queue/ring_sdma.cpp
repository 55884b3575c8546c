// ring_sdma.cpp: SDMA ring placement and submission (see ring_sdma.hpp).
#include "runtime/queue/ring_sdma.hpp"

#include "runtime/queue/sdma_packet_size.hpp"

namespace tg::queue {

sdma_placement place_sdma(std::span<const std::uint32_t> packets, std::uint64_t pos, std::uint64_t ring_bytes,
                          sdma_wrap rule) {
  const std::uint64_t left = ring_bytes - pos % ring_bytes;
  const std::uint64_t total = packets.size_bytes();
  // "Fits" is strict, as in the reference (tinygrad/runtime/ops_amd.py: AMDCopyQueue._submit): a
  // submission that would end exactly at the ring end goes to offset 0 instead.
  std::size_t fit = 0;
  if (total < left) {
    fit = packets.size();
  } else if (rule == sdma_wrap::split_at_packet) {
    for (std::size_t at = 0; at < packets.size();) {
      std::size_t next = at + sdma::packet_dwords(packets.subspan(at));
      if (next * 4 >= left) break;
      fit = at = next;
    }
  }
  if (fit == packets.size()) return {fit, 0, total};
  const std::uint64_t zeroed = left - fit * 4;
  return {fit, zeroed, total + zeroed};
}

void ring_sdma::submit(std::span<const std::uint32_t> packets) {
  if (packets.empty()) return;
  require_usable();
  // Also checks that `packets` is a sequence of whole packets, whatever the rule.
  for (std::size_t at = 0; at < packets.size();) at += sdma::packet_dwords(packets.subspan(at));
  const sdma_placement p = place_sdma(packets, put(), size_units(), rule_);
  reserve(p.consumed_bytes);
  std::uint64_t at = put();
  write(at, packets.first(p.tail_dwords));
  at += p.tail_dwords * 4;
  if (p.tail_dwords < packets.size()) {
    zero(at, p.zeroed_bytes);
    at += p.zeroed_bytes;
    write(at, packets.subspan(p.tail_dwords));
    at += packets.size_bytes() - p.tail_dwords * 4;
  }
  publish(at);
}

}  // namespace tg::queue
