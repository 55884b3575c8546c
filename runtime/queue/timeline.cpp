// timeline.cpp: timeline values, waits and wrap (see timeline.hpp).
#include "runtime/queue/timeline.hpp"

#include <utility>

namespace tg::queue {

timeline::timeline(gpu_signal signal, std::uint64_t wrap_at) : signal_(std::move(signal)), wrap_at_(wrap_at) {
  if (wrap_at_ == 0 || wrap_at_ >= 0xFFFFFFFFu)
    throw usage_error(str(signal_.owner(), ": timeline wrap point ", wrap_at_,
                          " must be in 1..2^32-2 (engines write 32-bit values)"));
  signal_.set(0);
}

void timeline::wait(submission s, std::chrono::milliseconds timeout, const wait_hook& hook) const {
  if (s.epoch != epoch_ || s.value <= reached_) return;
  signal_.wait(s.value, timeout, hook);
  reached_ = std::max(reached_, s.value);
}

bool timeline::wrap_if_due() {
  if (!is_wrap_due()) return false;
  if (!is_complete(last())) TG_UNREACHABLE("timeline wrapped while work was in flight");
  abandon_and_restart();
  return true;
}

void timeline::abandon_and_restart() {
  signal_.set(0);
  next_ = 1;
  reached_ = 0;
  ++epoch_;
}

}  // namespace tg::queue
