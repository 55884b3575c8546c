// poll_wait.hpp: the one loop every host-side wait on an engine uses (ring space, signals).
//
// Each wait has a timeout, and the timer restarts whenever the polled value changes: progress
// means the engine is alive, only a stall is a hang (the reference's signal wait does the same,
// tinygrad/runtime/support/hcq.py: HCQSignal.wait). The caller turns a timeout into a device_error
// naming what it waited for and the last value read.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

namespace tg::queue {

// Called about every wait_hook_period while a wait has not finished. The driver polls the IH ring
// here and throws device_error when it finds a fault, so a page fault surfaces in well under the
// timeout (tg's choice; the reference's USBIface.sleep in tinygrad/runtime/ops_amd.py does nothing,
// so it only notices at the timeout).
using wait_hook = std::function<void()>;
inline constexpr std::chrono::milliseconds wait_hook_period{100};

struct poll_result {
  bool reached = false;  // done(last) held
  std::uint64_t last = 0;  // the last value read
};

// Reads until done(value), or until `timeout` passes without the value changing.
template <class Read, class Done>
poll_result poll_until(Read read, Done done, std::chrono::milliseconds timeout, const wait_hook& hook = {}) {
  using clock = std::chrono::steady_clock;
  std::uint64_t last = read();
  if (done(last)) return {true, last};
  auto now = clock::now();
  auto deadline = now + timeout;
  auto next_hook = now + wait_hook_period;
  // Yield first: an engine (or a test's consumer thread) usually answers within microseconds.
  // Then sleep briefly, so a long wait does not take a core from the thread that has to make the
  // progress (tests run with two cores).
  constexpr int yield_polls = 256;
  constexpr std::chrono::microseconds sleep_step{20};
  for (int polls = 0;; ++polls) {
    if (polls < yield_polls) std::this_thread::yield();
    else std::this_thread::sleep_for(sleep_step);
    std::uint64_t value = read();
    if (done(value)) return {true, value};
    now = clock::now();
    if (value != last) {
      last = value;
      deadline = now + timeout;
    }
    if (now >= deadline) return {false, value};
    if (hook && now >= next_hook) {
      hook();
      next_hook = now + wait_hook_period;
    }
  }
}

}  // namespace tg::queue
