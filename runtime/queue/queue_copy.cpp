// queue_copy.cpp: SDMA queue submission and waits (see queue_copy.hpp).
#include "runtime/queue/queue_copy.hpp"

#include <utility>

#include "runtime/queue/emit_signal.hpp"
#include "runtime/queue/queue_wait.hpp"

namespace tg::queue {

queue_copy::queue_copy(queue_copy_config config)
    : ring_(std::move(config.ring), config.wrap),
      timeline_(gpu_signal("queue " + ring_.name(), "timeline", config.signal), config.timeline_wrap) {}

submission queue_copy::submit(std::span<const std::uint32_t> packets) {
  ring_.require_usable();
  if (timeline_.is_wrap_due()) synchronize(ring_.config().space_timeout);
  staged_.assign(packets.begin(), packets.end());
  emit_signal_sdma(staged_, timeline_.signal(), timeline_.upcoming().value);
  ring_.submit(staged_);
  return timeline_.commit();
}

void queue_copy::wait(submission s, std::chrono::milliseconds timeout) { wait_or_fail(ring_, timeline_, s, timeout); }

void queue_copy::synchronize(std::chrono::milliseconds timeout) { synchronize_or_fail(ring_, timeline_, timeout); }

}  // namespace tg::queue
