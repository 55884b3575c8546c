// gpu_signal.hpp: a 64-bit value in GPU-visible memory that engines raise and the host waits on.
//
// Layout (tinygrad/runtime/support/hcq.py: HCQSignal): 16 bytes, the value at +0 and a 64-bit
// timestamp at +8 (GPU clock, 100 MHz: 100 ticks per microsecond, the timestamp_divider of
// tinygrad/runtime/ops_amd.py: AMDSignal). Engines write 32 bits (RELEASE_MEM DATA_SEL 1, SDMA
// FENCE) and their waits compare 32 bits (WAIT_REG_MEM, POLL_REGMEM); the host reads and writes
// all 64, so the upper dword stays 0 and values stay below 2^32 (timeline.hpp wraps them at 2^31).
//
// Named gpu_signal rather than signal: ::signal from <csignal> would collide with it wherever a
// file says `using namespace tg::queue`.
//
//   tg::queue::gpu_signal s("queue compute0", "timeline", mem.slice(0, 16));
//   s.wait(5, std::chrono::milliseconds(100));  // device_error naming queue, signal, 5 and the last value
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/queue/poll_wait.hpp"
#include "runtime/queue/queue_memory.hpp"

namespace tg::queue {

class gpu_signal {
 public:
  static constexpr std::size_t size_bytes = 16;
  static constexpr std::size_t value_offset = 0;
  static constexpr std::size_t timestamp_offset = 8;
  static constexpr std::uint64_t timestamp_ticks_per_us = 100;

  // `owner` starts every message ("queue compute0", "graph 3"); `name` names the signal. `memory`
  // holds at least 16 bytes, 8-byte aligned in both views. The value is left as it is.
  gpu_signal(std::string owner, std::string name, queue_memory memory);

  const std::string& owner() const { return owner_; }
  const std::string& name() const { return name_; }
  gpu_va value_va() const { return memory_.va + value_offset; }
  gpu_va timestamp_va() const { return memory_.va + timestamp_offset; }

  std::uint64_t value() const { return load64(memory_, value_offset); }
  std::uint64_t timestamp() const { return load64(memory_, timestamp_offset); }
  void set(std::uint64_t value) { store64(memory_, value_offset, value); }

  // Returns once value() >= `target`. Throws device_error if the value stays unchanged for
  // `timeout` (progress restarts the timer, as HCQSignal.wait); `hook` runs about every 100 ms
  // meanwhile.
  void wait(std::uint64_t target, std::chrono::milliseconds timeout, const wait_hook& hook = {}) const;

 private:
  std::string owner_, name_;
  queue_memory memory_;
};

}  // namespace tg::queue
