// queue_wait.hpp: host waits on a queue's timeline that mark the queue failed when they fail.
//
// A timeout or a fault reported by the wait hook means the engine can no longer be trusted: the
// queue's ring is marked failed (ring.hpp) so every later use throws at once, as the reference
// latches its error_state and raises it on the next synchronize (tinygrad/runtime/support/hcq.py:
// HCQCompiled.synchronize).
#pragma once
#include <chrono>

#include "runtime/queue/ring.hpp"
#include "runtime/queue/timeline.hpp"

namespace tg::queue {

// Returns once `s` completed; throws device_error otherwise (and marks `r` failed).
void wait_or_fail(ring& r, const timeline& t, submission s, std::chrono::milliseconds timeout);

// Waits for everything submitted, then lets the timeline wrap if it is due.
void synchronize_or_fail(ring& r, timeline& t, std::chrono::milliseconds timeout);

}  // namespace tg::queue
