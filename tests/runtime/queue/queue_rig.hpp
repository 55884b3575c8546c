// queue_rig.hpp: the memory one queue needs, carved from a host arena in a fixed order.
//
// Layout (VAs are deterministic, so messages can be checked verbatim): the ring at the arena base
// 0x1234000000, the 256-byte pointer page right after it, then the 16-byte timeline signal.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/runtime/queue/host_arena.hpp"
#include "runtime/queue/ring.hpp"

namespace tg::test {

struct queue_rig {
  host_arena arena;
  recording_doorbell bell;
  queue::queue_memory ring, page, signal;
  queue::ring_pointers pointers;

  explicit queue_rig(std::size_t ring_bytes, std::size_t arena_bytes = 1 << 20)
      : arena(arena_bytes), ring(arena.carve(ring_bytes)), page(arena.carve(queue::pointer_page_bytes)),
        signal(arena.carve(16, 16)), pointers(queue::pointers_in_page(page)) {}

  queue::ring_config config(std::string name = "compute0",
                            std::chrono::milliseconds space_timeout = std::chrono::milliseconds(2000)) {
    return {.name = std::move(name), .ring = ring, .rptr = pointers.rptr, .wptr = pointers.wptr, .bell = &bell,
            .space_timeout = space_timeout};
  }

  std::uint32_t ring_dword(std::size_t i) const { return queue::read_dword(ring, 4 * i); }
  std::uint64_t wptr() const { return queue::load64(pointers.wptr, 0); }
  // What an engine would report after consuming up to `at` (a put-like count).
  void consume_to(std::uint64_t at) { queue::store64(pointers.rptr, 0, at); }
};

}  // namespace tg::test
