// timeline.hpp: a queue's timeline: the value each submission signals, and completion checks.
//
// Each submission ends by raising the timeline signal to the next value; all work up to a
// submission is done once the signal reached its value (as tinygrad/runtime/support/hcq.py:
// HCQCompiled's timeline: values start at 1, "wait for everything" = wait for the last value
// handed out).
//
// Wrap: engines write 32 bits, so values may not grow forever. Once the last value passed
// `wrap_at` (2^31, as the reference) and the queue is idle, the signal goes back to 0 and values
// restart at 1 in a new epoch. A submission from an older epoch is complete by construction: the
// wrap only happens after everything before it finished. (The reference swaps to a shadow signal
// instead, HCQCompiled._wrap_timeline_signal, because other queues may still wait on the old
// values; here no other queue may hold a GPU-side wait on this timeline across a wrap.)
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>

#include "runtime/queue/gpu_signal.hpp"

namespace tg::queue {

// What a submission signals: timeline value `value` in wrap epoch `epoch`.
struct submission {
  std::uint64_t value = 0;
  std::uint64_t epoch = 0;
  friend constexpr bool operator==(submission, submission) = default;
};

inline constexpr std::uint64_t default_timeline_wrap = 1ull << 31;

class timeline {
 public:
  // Sets the signal to 0; the first submission signals 1.
  explicit timeline(gpu_signal signal, std::uint64_t wrap_at = default_timeline_wrap);

  const gpu_signal& signal() const { return signal_; }
  std::uint64_t epoch() const { return epoch_; }

  // The value the next submission signals; commit() once it is in the ring, so a submission
  // that failed to go in never leaves a value nobody will signal.
  submission upcoming() const { return {next_, epoch_}; }
  submission commit() { return {next_++, epoch_}; }
  // The most recent value handed out ({0, epoch} before any: already complete).
  submission last() const { return {next_ - 1, epoch_}; }

  // Reads the signal only when no earlier read already showed s done: within an epoch the value
  // only grows, and over the USB bridge each read is a round trip.
  bool is_complete(submission s) const {
    if (s.epoch != epoch_ || s.value <= reached_) return true;
    reached_ = std::max(reached_, signal_.value());
    return reached_ >= s.value;
  }
  // Throws device_error from gpu_signal::wait.
  void wait(submission s, std::chrono::milliseconds timeout, const wait_hook& hook = {}) const;

  // The values passed wrap_at: the queue should drain and wrap before the next submission.
  bool is_wrap_due() const { return next_ - 1 > wrap_at_; }
  // Call only when is_complete(last()). Restarts at 1 if is_wrap_due(); true if so.
  bool wrap_if_due();
  // After the engine was reset (the driver's recovery of a failed queue): what was submitted
  // before will never run, so nothing can still use what it used, and it counts as complete, as
  // an older epoch's work does after a wrap. The signal goes to 0, values restart at 1 in a new
  // epoch: kernarg slots and indirect buffers that remember an older submission are free to reuse.
  void abandon_and_restart();

 private:
  gpu_signal signal_;
  std::uint64_t wrap_at_;
  std::uint64_t next_ = 1;
  std::uint64_t epoch_ = 0;
  mutable std::uint64_t reached_ = 0;  // the highest value the signal was seen at in this epoch
};

}  // namespace tg::queue
