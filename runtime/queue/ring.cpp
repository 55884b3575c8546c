// ring.cpp: ring pointers, free space, publishing and the failure latch (see ring.hpp).
#include "runtime/queue/ring.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <utility>

namespace tg::queue {

ring_pointers pointers_in_page(const queue_memory& page) {
  return {page.slice(pointer_page_rptr_offset, 8), page.slice(pointer_page_wptr_offset, 8)};
}

ring::ring(ring_config config, std::size_t unit_bytes)
    : config_(std::move(config)), unit_bytes_(unit_bytes), size_units_(config_.ring.size_bytes() / unit_bytes) {
  const std::size_t bytes = config_.ring.size_bytes();
  // 256 bytes: the smallest ring whose base register (va >> 8) and size fields make sense.
  if (bytes < 256 || !std::has_single_bit(bytes))
    throw usage_error(str("queue ", config_.name, ": ring of ", bytes,
                          " bytes; it must be a power of two of at least 256 bytes"));
  if (!config_.ring.va.is_aligned(256))
    throw usage_error(str("queue ", config_.name, ": ring va ", config_.ring.va,
                          " is not 256-byte aligned (the engine takes va >> 8)"));
  if (reinterpret_cast<std::uintptr_t>(config_.ring.host_view.data()) % 4 != 0)
    throw usage_error(str("queue ", config_.name, ": ring host view is not 4-byte aligned"));
  if (config_.bell == nullptr) throw usage_error(str("queue ", config_.name, ": no doorbell"));
  require_word64(config_.rptr, 0, "ring read pointer");
  require_word64(config_.wptr, 0, "ring write-pointer shadow");
  // The engine starts at 0 (RB_RPTR / RB_WPTR = 0 in tinygrad/runtime/support/am/ip.py:
  // AM_SDMA.setup_ring; a fresh MQD in AM_GFX.setup_ring).
  store64(config_.rptr, 0, 0);
  store64(config_.wptr, 0, 0);
}

std::uint64_t ring::read_pointer() const {
  std::uint64_t reported = load64(config_.rptr, 0);
  return put_ - ((put_ - reported) & (size_units_ - 1));
}

void ring::restart_empty() {
  put_ = 0;
  failure_.clear();
  store64(config_.rptr, 0, 0);
  store64(config_.wptr, 0, 0);
}

void ring::mark_failed(const std::string& why) {
  if (failure_.empty()) failure_ = why;
}

void ring::require_usable() const {
  if (is_failed())
    throw device_error(str("queue ", config_.name, " failed earlier and takes no more work: ", failure_));
}

void ring::reserve(std::uint64_t units) {
  require_usable();
  if (units > capacity_units())
    throw usage_error(str("queue ", config_.name, ": a submission of ", units, " ", unit_name(),
                          " does not fit a ring of ", size_units_, " ", unit_name(), " (at most ", capacity_units(),
                          "); put the commands in an indirect buffer"));
  auto fits = [&](std::uint64_t read) {
    std::uint64_t used = put_ - read;  // a garbled SDMA report can exceed the capacity by < 4 bytes
    return used <= capacity_units() && capacity_units() - used >= units;
  };
  if (fits(read_pointer())) return;
  ++space_waits_;
  poll_result r;
  try {
    r = poll_until([&] { return read_pointer(); }, fits, config_.space_timeout, config_.on_wait);
  } catch (const device_error& e) {  // the wait hook found a fault
    mark_failed(e.what());
    throw;
  }
  if (r.reached) return;
  std::string why = str("queue ", config_.name, ": waited ", config_.space_timeout.count(),
                        " ms for ring space without progress: ", units, " ", unit_name(), " needed, read pointer ",
                        r.last, ", write pointer ", put_, ", ring of ", size_units_, " ", unit_name(),
                        " (engine hung or faulted?)");
  mark_failed(why);
  throw device_error(why);
}

void ring::write(std::uint64_t at, std::span<const std::uint32_t> words) {
  const std::size_t first = byte_offset(at);
  const std::size_t to_end = (config_.ring.size_bytes() - first) / 4;
  const std::size_t head = std::min(words.size(), to_end);
  write_dwords(config_.ring, first, words.first(head));
  if (head < words.size()) write_dwords(config_.ring, 0, words.subspan(head));
}

void ring::zero(std::uint64_t at, std::uint64_t units) {
  const std::size_t first = byte_offset(at), bytes = std::size_t(units * unit_bytes_);
  const std::size_t head = std::min(bytes, config_.ring.size_bytes() - first);
  zero_bytes(config_.ring, first, head);
  zero_bytes(config_.ring, 0, bytes - head);
}

void ring::publish(std::uint64_t new_put) {
  put_ = new_put;
  // A full fence, not only a release one: on x86 a release fence emits no instruction, and ring
  // memory may be a write-combined BAR mapping whose buffered stores only an mfence drains.
  // amdgpu_ring_commit issues mb() before setting the write pointer for the same reason; the
  // reference issues a seq_cst fence before the doorbell (tinygrad/runtime/ops_amd.py:
  // AMDQueueDesc.signal_doorbell).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  store64(config_.wptr, 0, put_);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  config_.bell->write64(put_);
}

}  // namespace tg::queue
