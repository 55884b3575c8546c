// ring_sdma.hpp: the SDMA ring: byte pointers, packets that never straddle the ring end.
//
// Pointer units (tinygrad/runtime/ops_amd.py: AMDCopyQueue._submit): put value, write-pointer
// shadow, doorbell value and the engine's read-pointer write-back all count bytes (Linux writes
// wptr << 2).
//
// Wrap rule (AMDCopyQueue._submit; the reference assumes SDMA cannot execute a packet that straddles
// the ring end, while Linux lets its SDMA packets wrap: tg keeps the stricter rule, which costs at
// most one zeroed tail per wrap):
//   split_at_packet (reference, PCI): the leading packets that fit before the ring end, their
//     bytes strictly less than the space left, are written there; if any remain, the space from
//     after them to the ring end is zero-filled (a zero dword is an SDMA NOP: SDMA_OP_NOP is 0 in
//     sdma_v6_0_0_pkt_open.h) and the rest starts at offset 0.
//   whole_submission (reference on USB, and hcq2): the same, but either every packet fits at the
//     tail or none is written there.
// The bytes consumed (packets plus zeroed tail) must leave one dword of the ring free; before
// writing, the ring waits until the engine has read far enough (as AMDCopyQueue._submit busy-waits
// on PCI; here for both rules).
//
//   tg::queue::ring_sdma ring({.name = "sdma0", .ring = mem, .rptr = p.rptr, .wptr = p.wptr, .bell = &bell});
//   tg::queue::cmd_buffer cb;
//   tg::queue::sdma::emit_copy_linear(cb, dst, src, bytes);
//   ring.submit(cb);
#pragma once
#include <cstdint>
#include <span>
#include <utility>

#include "runtime/queue/ring.hpp"

namespace tg::queue {

enum class sdma_wrap : std::uint8_t { split_at_packet, whole_submission };

// Where a submission goes: `tail_dwords` at the current position, then `zeroed_bytes` of NOPs up
// to the ring end, then the remaining dwords from offset 0.
struct sdma_placement {
  std::size_t tail_dwords;
  std::uint64_t zeroed_bytes;
  std::uint64_t consumed_bytes;  // what the put value advances by
};

// The placement of `packets` (complete SDMA packets) at byte position `pos` of a ring of
// `ring_bytes`. Pure; exposed for tests and for the emulator's straddle check.
sdma_placement place_sdma(std::span<const std::uint32_t> packets, std::uint64_t pos, std::uint64_t ring_bytes,
                          sdma_wrap rule);

class ring_sdma : public ring {
 public:
  explicit ring_sdma(ring_config config, sdma_wrap rule = sdma_wrap::split_at_packet)
      : ring(std::move(config), 1), rule_(rule) {}

  sdma_wrap rule() const { return rule_; }

  // Places, waits for room, writes and rings the doorbell once. `packets` holds whole packets.
  void submit(std::span<const std::uint32_t> packets);

 private:
  sdma_wrap rule_;
};

}  // namespace tg::queue
