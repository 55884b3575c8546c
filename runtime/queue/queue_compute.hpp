// queue_compute.hpp: a PM4 compute queue: ring, timeline signal, IB submission, synchronize.
//
// Every submission ends with a RELEASE_MEM that raises the timeline signal to the submission's
// value (tinygrad/runtime/ops_amd.py: AMDComputeQueue.signal), in the same ring write and behind
// the same doorbell as the commands. synchronize() waits for the last value; a wait that times out
// (or a wait hook that reports a fault) marks the queue failed, and from then on every call throws
// a device_error that repeats the first error, instead of hanging (as the error_state that
// tinygrad/runtime/support/hcq.py: HCQCompiled.synchronize re-raises). Recovering the engine
// (dequeue, MEC reset, fresh MQD) is the driver's; in between it calls restart(), which empties
// this queue and starts its timeline in a new epoch.
//
//   tg::queue::queue_compute q({.ring = {.name = "compute0", .ring = ring_mem, .rptr = p.rptr,
//                               .wptr = p.wptr, .bell = &bell}, .signal = signal_mem});
//   tg::queue::submission s = q.submit(commands);
//   q.synchronize(std::chrono::milliseconds(30000));
//
// Not thread-safe: one thread submits to a queue.
#pragma once
#include <chrono>
#include <span>

#include "runtime/queue/cmd_buffer.hpp"
#include "runtime/queue/indirect_buffer.hpp"
#include "runtime/queue/ring_pm4.hpp"
#include "runtime/queue/timeline.hpp"

namespace tg::queue {

struct queue_compute_config {
  ring_config ring;
  queue_memory signal;  // 16 bytes for the timeline signal (gpu_signal.hpp)
  std::uint64_t timeline_wrap = default_timeline_wrap;
};

class queue_compute {
 public:
  explicit queue_compute(queue_compute_config config);
  queue_compute(const queue_compute&) = delete;
  queue_compute& operator=(const queue_compute&) = delete;

  const std::string& name() const { return ring_.name(); }

  // The commands, then RELEASE_MEM(timeline = value); waits for ring space first.
  submission submit(std::span<const std::uint32_t> commands);
  // INDIRECT_BUFFER(ib), then RELEASE_MEM(timeline = value); records the value in the IB.
  submission submit_ib(indirect_buffer& ib);

  bool is_complete(submission s) const { return timeline_.is_complete(s); }
  void wait(submission s, std::chrono::milliseconds timeout);
  // Waits for everything submitted so far.
  void synchronize(std::chrono::milliseconds timeout = default_wait_timeout);
  // The driver's recovery, with the engine stopped: an empty ring and a timeline in a new epoch
  // (timeline::abandon_and_restart). The queue object stays, so indirect buffers that point at it
  // and kernarg slots that remember its submissions stay usable.
  void restart() {
    ring_.restart_empty();
    timeline_.abandon_and_restart();
  }

  submission last_submitted() const { return timeline_.last(); }
  const gpu_signal& timeline_signal() const { return timeline_.signal(); }
  bool is_failed() const { return ring_.is_failed(); }
  const std::string& failure() const { return ring_.failure(); }
  const ring_pm4& pm4_ring() const { return ring_; }

 private:
  void prepare_submit();

  ring_pm4 ring_;
  timeline timeline_;
  cmd_buffer tail_;  // the packets appended to a submission, reused to avoid allocations
};

}  // namespace tg::queue
