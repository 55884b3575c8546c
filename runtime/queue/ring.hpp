// ring.hpp: what the PM4 and SDMA rings share: pointers, free space, publishing, failure.
//
// A ring is a power-of-two buffer the host fills and an engine drains. The host keeps a 64-bit
// "put value" that only grows (tinygrad/runtime/ops_amd.py: AMDQueueDesc.put_value); slot = put mod
// ring size. The engine reports how far it has read through the read-pointer write-back word and
// polls the write-pointer shadow; the doorbell wakes it. Units differ per engine (PM4 dwords, SDMA
// bytes: sdma_v6_0_ring_set_wptr writes wptr << 2), so ring_pm4 and ring_sdma pass theirs in and
// everything here counts in those units.
//
// Back-pressure (tg's choice; the reference has none for compute, AMDComputeQueue._submit): nothing
// is written over ring space the engine has not consumed. reserve() waits, with a timeout, until the
// read pointer has advanced far enough.
//
// Read-pointer format: gfx11 reports a 32-bit PM4 read pointer (gfx_v11_0_ring_get_rptr_compute,
// "gfx11 hardware is 32bit rptr") and SDMA a 64-bit byte count (sdma_v6_0_ring_get_rptr). Whether
// the engine's value wraps at the ring size or keeps growing, it is reduced modulo the ring size
// against the put value; that is unambiguous because at least one dword always stays free, so a
// full ring never looks empty.
//
// Construction zeroes both pointer words, so build the ring before the engine is started on it
// (before the MQD / RB registers point at this memory).
//
// Not thread-safe: one thread submits to a ring.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "runtime/queue/doorbell.hpp"
#include "runtime/queue/poll_wait.hpp"
#include "runtime/queue/queue_memory.hpp"

namespace tg::queue {

// The engine does not move for this long, and the wait is a hang (30 s, the default of
// tinygrad/runtime/support/hcq.py: HCQSignal.wait).
inline constexpr std::chrono::milliseconds default_wait_timeout{30000};

struct ring_config {
  std::string name;      // names the queue in every message: "compute0", "sdma0"
  queue_memory ring;     // a power of two of at least 256 bytes; va 256-byte aligned (PQ_BASE, RB_BASE = va >> 8)
  queue_memory rptr;     // 8 bytes the engine writes its read pointer to
  queue_memory wptr;     // 8 bytes holding the write-pointer shadow the engine polls
  doorbell* bell = nullptr;  // required, not owned
  std::chrono::milliseconds space_timeout = default_wait_timeout;
  wait_hook on_wait;     // optional; see poll_wait.hpp
};

// The reference's 256-byte pointer page, laid out as HSA's amd_queue_t: write pointer at byte 56,
// read pointer at byte 128 (ROCR-Runtime amd_hsa_queue.h; the MQD's wptr_poll_addr and
// rptr_report_addr).
inline constexpr std::size_t pointer_page_bytes = 256;
inline constexpr std::size_t pointer_page_wptr_offset = 56;
inline constexpr std::size_t pointer_page_rptr_offset = 128;

struct ring_pointers {
  queue_memory rptr, wptr;
};
ring_pointers pointers_in_page(const queue_memory& page);

class ring {
 public:
  const std::string& name() const { return config_.name; }
  const ring_config& config() const { return config_; }

  // In the ring's units (unit_name()): dwords for PM4, bytes for SDMA.
  const char* unit_name() const { return unit_bytes_ == 4 ? "dwords" : "bytes"; }
  std::uint64_t size_units() const { return size_units_; }
  // The most units that may be in flight: the ring less one dword (see above).
  std::uint64_t capacity_units() const { return size_units_ - 4 / unit_bytes_; }
  std::uint64_t put() const { return put_; }
  // The engine's position as a put-like count: put() minus what is still unconsumed.
  std::uint64_t read_pointer() const;
  std::uint64_t in_flight() const { return put_ - read_pointer(); }

  // How many reservations had to wait for the engine (for tests and logs).
  std::uint64_t space_waits() const { return space_waits_; }

  // A failed ring takes no more work: every later submit throws the first error again, so a hung
  // queue reports itself instead of deadlocking.
  bool is_failed() const { return !failure_.empty(); }
  const std::string& failure() const { return failure_; }
  void mark_failed(const std::string& why);
  void require_usable() const;
  // Back to empty at put 0, the failure cleared and both pointer words zeroed, as construction
  // leaves it. Only while the engine is stopped (the driver's recovery), before it is started on
  // this memory again: the queue object, and every pointer to it, stays valid.
  void restart_empty();

 protected:
  ring(ring_config config, std::size_t unit_bytes);
  ~ring() = default;
  ring(const ring&) = delete;
  ring& operator=(const ring&) = delete;

  // Waits until `units` more fit (capacity_units() - in_flight() >= units). A request larger than
  // the capacity is a usage_error; a stall longer than space_timeout a device_error that also
  // marks the ring failed.
  void reserve(std::uint64_t units);
  // Copies words to put-position `at` (a put-like count, >= put()), wrapping at the ring end.
  void write(std::uint64_t at, std::span<const std::uint32_t> words);
  // Zeroes `units` from position `at` (SDMA NOP padding), wrapping at the ring end.
  void zero(std::uint64_t at, std::uint64_t units);
  // Makes everything before `new_put` visible to the engine: fence, write-pointer shadow, fence,
  // doorbell (tinygrad/runtime/ops_amd.py: AMDQueueDesc.signal_doorbell).
  void publish(std::uint64_t new_put);

 private:
  std::size_t byte_offset(std::uint64_t at) const {
    return std::size_t((at * unit_bytes_) % config_.ring.size_bytes());
  }

  ring_config config_;
  std::size_t unit_bytes_;
  std::uint64_t size_units_;
  std::uint64_t put_ = 0;
  std::uint64_t space_waits_ = 0;
  std::string failure_;
};

}  // namespace tg::queue
