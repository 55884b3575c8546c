// indirect_buffer.hpp: a recorded PM4 command buffer kept in GPU memory for graph replay.
//
// The commands are copied into IB memory once; each replay patches a few dwords in place (kernel
// arguments, signal values: at dword offsets the recorder noted) and submits only a 4-dword
// INDIRECT_BUFFER packet from the ring (tinygrad/runtime/ops_amd.py: AMDComputeQueue.bind). Memory
// past the commands is data the commands point at, kernel arguments for instance, and is patched
// the same way (like the kernargs tinygrad's hcq2, extra/hcq2/ops_amd2.py, packs at the tail of a
// command buffer).
//
// Reuse protocol (tinygrad/runtime/graph/hcq.py: HCQGraph.__call__ waits for the previous replay
// before patching): an IB is never written while the GPU may read it. Each submission records its
// timeline value; patch() refuses (usage_error) until that value was reached, and wait_idle()
// waits for it. The CP has read all of the IB once the RELEASE_MEM that follows the
// INDIRECT_BUFFER in the ring has signalled.
//
//   tg::queue::indirect_buffer ib("graph0", mem, recorded);
//   for (...) {
//     ib.wait_idle(timeout);
//     ib.patch(arg_dword, value);
//     queue.submit_ib(ib);
//   }
//
// An IB must not outlive the queue it was last submitted to (it keeps a pointer to it).
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "runtime/queue/queue_memory.hpp"
#include "runtime/queue/timeline.hpp"

namespace tg::queue {

class queue_compute;

class indirect_buffer {
 public:
  // `memory` holds the commands and any data after them; its va is 4-byte aligned (nvd.h: IB_BASE_LO
  // holds bits 31:2).
  indirect_buffer(std::string name, queue_memory memory, std::span<const std::uint32_t> commands);

  const std::string& name() const { return name_; }
  gpu_va va() const { return memory_.va; }
  std::uint32_t command_dwords() const { return command_dwords_; }
  std::size_t size_dwords() const { return memory_.size_bytes() / 4; }
  gpu_va dword_va(std::size_t dword) const { return memory_.va + 4 * dword; }

  // True when no submission of this IB may still be read by the GPU.
  bool is_idle() const;
  // Throws device_error (and the queue is marked failed) if the last submission does not finish.
  void wait_idle(std::chrono::milliseconds timeout);

  // Write dword(s) at `dword` (commands or data). usage_error while not is_idle() or out of range.
  void patch(std::size_t dword, std::uint32_t value);
  void patch64(std::size_t dword, std::uint64_t value);
  // A run of dwords from `dword`, with one idle check (graphs patch a replay's changes in runs).
  void patch_words(std::size_t dword, std::span<const std::uint32_t> words);
  std::uint32_t read(std::size_t dword) const;

  // Called by queue_compute::submit_ib.
  void mark_submitted(queue_compute& queue, submission s);

 private:
  void require_patchable(std::size_t dword, std::size_t count) const;

  std::string name_;
  queue_memory memory_;
  std::uint32_t command_dwords_;
  queue_compute* last_queue_ = nullptr;
  submission last_{};
};

}  // namespace tg::queue
