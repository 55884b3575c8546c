// gpu_signal.cpp: signal waits (see gpu_signal.hpp).
#include "runtime/queue/gpu_signal.hpp"

#include <utility>

namespace tg::queue {

gpu_signal::gpu_signal(std::string owner, std::string name, queue_memory memory)
    : owner_(std::move(owner)), name_(std::move(name)), memory_(std::move(memory)) {
  require_word64(memory_, value_offset, "signal value");
  require_word64(memory_, timestamp_offset, "signal timestamp");
}

void gpu_signal::wait(std::uint64_t target, std::chrono::milliseconds timeout, const wait_hook& hook) const {
  poll_result r = poll_until([this] { return value(); }, [target](std::uint64_t v) { return v >= target; }, timeout,
                             hook);
  if (!r.reached)
    throw device_error(str(owner_, ": signal ", name_, " at ", value_va(),
                           " did not reach ", target, " within ", timeout.count(), " ms without progress; last value ",
                           r.last, " (engine hung or faulted?)"));
}

}  // namespace tg::queue
