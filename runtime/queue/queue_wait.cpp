// queue_wait.cpp: timeline waits that latch failure (see queue_wait.hpp).
#include "runtime/queue/queue_wait.hpp"

namespace tg::queue {

void wait_or_fail(ring& r, const timeline& t, submission s, std::chrono::milliseconds timeout) {
  r.require_usable();
  try {
    t.wait(s, timeout, r.config().on_wait);
  } catch (const device_error& e) {
    r.mark_failed(e.what());
    throw;
  }
}

void synchronize_or_fail(ring& r, timeline& t, std::chrono::milliseconds timeout) {
  wait_or_fail(r, t, t.last(), timeout);
  t.wrap_if_due();
}

}  // namespace tg::queue
