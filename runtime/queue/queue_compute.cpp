// queue_compute.cpp: compute queue submission and waits (see queue_compute.hpp).
#include "runtime/queue/queue_compute.hpp"

#include <utility>

#include "runtime/queue/emit_signal.hpp"
#include "runtime/queue/queue_wait.hpp"

namespace tg::queue {

queue_compute::queue_compute(queue_compute_config config)
    : ring_(std::move(config.ring)),
      timeline_(gpu_signal("queue " + ring_.name(), "timeline", config.signal), config.timeline_wrap) {}

void queue_compute::prepare_submit() {
  ring_.require_usable();
  // Drain before the values outgrow 32 bits (timeline.hpp); once per 2^31 submissions.
  if (timeline_.is_wrap_due()) synchronize(ring_.config().space_timeout);
  tail_.clear();
}

submission queue_compute::submit(std::span<const std::uint32_t> commands) {
  prepare_submit();
  emit_signal_pm4(tail_, timeline_.signal(), timeline_.upcoming().value);
  ring_.submit({commands, tail_});
  return timeline_.commit();
}

submission queue_compute::submit_ib(indirect_buffer& ib) {
  prepare_submit();
  pm4::emit_indirect_buffer(tail_, ib.va(), ib.command_dwords());
  emit_signal_pm4(tail_, timeline_.signal(), timeline_.upcoming().value);
  ring_.submit({tail_});
  submission s = timeline_.commit();
  ib.mark_submitted(*this, s);
  return s;
}

void queue_compute::wait(submission s, std::chrono::milliseconds timeout) {
  wait_or_fail(ring_, timeline_, s, timeout);
}

void queue_compute::synchronize(std::chrono::milliseconds timeout) {
  synchronize_or_fail(ring_, timeline_, timeout);
}

}  // namespace tg::queue
