// queue_copy.hpp: an SDMA copy queue: ring, timeline signal, synchronize.
//
// The SDMA twin of queue_compute.hpp: every submission ends with a FENCE that raises the timeline
// signal (tinygrad/runtime/ops_amd.py: AMDCopyQueue.signal), placed by ring_sdma so that no packet
// straddles the ring end; waits that fail mark the queue failed. SDMA indirect buffers
// (AMDCopyQueue.bind, optional in the reference: env AMD_SDMA_BIND) are not supported.
//
//   tg::queue::queue_copy q({.ring = {.name = "sdma0", .ring = ring_mem, .rptr = p.rptr, .wptr = p.wptr,
//                            .bell = &bell}, .signal = signal_mem});
//   tg::queue::cmd_buffer cb;
//   tg::queue::sdma::emit_copy_linear(cb, dst, src, bytes);
//   q.submit(cb);
//   q.synchronize();
//
// Not thread-safe: one thread submits to a queue.
#pragma once
#include <chrono>
#include <span>

#include "runtime/queue/cmd_buffer.hpp"
#include "runtime/queue/ring_sdma.hpp"
#include "runtime/queue/timeline.hpp"

namespace tg::queue {

struct queue_copy_config {
  ring_config ring;
  queue_memory signal;  // 16 bytes for the timeline signal (gpu_signal.hpp)
  sdma_wrap wrap = sdma_wrap::split_at_packet;
  std::uint64_t timeline_wrap = default_timeline_wrap;
};

class queue_copy {
 public:
  explicit queue_copy(queue_copy_config config);
  queue_copy(const queue_copy&) = delete;
  queue_copy& operator=(const queue_copy&) = delete;

  const std::string& name() const { return ring_.name(); }

  // The packets (whole SDMA packets), then FENCE(timeline = value); waits for ring space first.
  submission submit(std::span<const std::uint32_t> packets);

  bool is_complete(submission s) const { return timeline_.is_complete(s); }
  void wait(submission s, std::chrono::milliseconds timeout);
  void synchronize(std::chrono::milliseconds timeout = default_wait_timeout);
  // The driver's recovery, with the engine stopped: an empty ring and a timeline in a new epoch
  // (timeline::abandon_and_restart); the queue object stays.
  void restart() {
    ring_.restart_empty();
    timeline_.abandon_and_restart();
  }

  submission last_submitted() const { return timeline_.last(); }
  const gpu_signal& timeline_signal() const { return timeline_.signal(); }
  bool is_failed() const { return ring_.is_failed(); }
  const std::string& failure() const { return ring_.failure(); }
  const ring_sdma& sdma_ring() const { return ring_; }

 private:
  ring_sdma ring_;
  timeline timeline_;
  cmd_buffer staged_;  // packets + FENCE: ring_sdma places one contiguous stream
};

}  // namespace tg::queue
