// am_candidate_runner.cpp: BEAM's candidates on an AMD GPU (see am_candidate_runner.hpp).
#include "drivers/amd/am_candidate_runner.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <tg/core/error.hpp>

#include "runtime/queue/emit_signal.hpp"
#include "runtime/tune/gpu_candidates.hpp"

namespace tg::amd {
namespace {

// Stand-in buffers on the device, released on every path out of a run (after a queue failure the
// backend keeps them mapped, as it does for any buffer a failed queue may still use).
struct device_buffers {
  backend& owner;
  std::vector<void*> slots;
  device_buffers(backend& b, std::span<const tune::slot_info> info) : owner(b) {
    try {
      // At least 16 bytes each: the kernels' loads assume 16-byte aligned, 16-byte padded buffers.
      for (const tune::slot_info& s : info) slots.push_back(owner.allocate(std::max<std::size_t>(s.size_bytes, 16)));
    } catch (...) {  // a card too full for the stand-ins: give back those made, and the search ends
      release_all();
      throw;
    }
  }
  ~device_buffers() { release_all(); }
  void release_all() {
    for (void* p : slots) owner.release(p);
    slots.clear();
  }
};

// A wave the emulated GPU took for an endless loop, or a wait that saw no progress: a hang.
bool is_hang(const std::string& what) {
  return what.find("endless loop") != std::string::npos || what.find("without progress") != std::string::npos;
}

}  // namespace

am_candidate_runner::am_candidate_runner(am_backend& device) : device_(device) {}
am_candidate_runner::am_candidate_runner(std::shared_ptr<am_backend> own) : own_(std::move(own)), device_(*own_) {}

am_candidate_runner::~am_candidate_runner() {
  before_.reset();
  after_.reset();
  if (stamps_.bytes != 0) device_.device().release(stamps_);
}

codegen::kernel_opts am_candidate_runner::default_opts(const kernel_source& source) {
  return tune::gpu_default_opts(device_.kernel_traits(), source);
}

codegen::kernel_opts am_candidate_runner::normalize(const codegen::kernel_opts& opts, const kernel_source& source) {
  return tune::normalize_gpu(opts, source.global_ranges);
}

std::vector<codegen::kernel_opts> am_candidate_runner::neighbours(const codegen::kernel_opts& from,
                                                                  const kernel_source& source) {
  return tune::gpu_neighbours_for(device_.kernel_traits().gpu, from, source);
}

tune::trial_result am_candidate_runner::run(program& candidate, const codegen::kernel_opts& opts,
                                            const tune::trial_setup& setup) {
  device_.synchronize();  // the user's own work first: neither timed with the candidate nor blamed on it
  tune::trial_result result;
  device_buffers buffers(device_, setup.slots);
  for (std::size_t k = 0; k < setup.slots.size(); ++k)
    if (!(*setup.inputs)[k].empty()) device_.copy_in(buffers.slots[k], (*setup.inputs)[k].data(), (*setup.inputs)[k].size());
  am_device& dev = device_.device();
  try {
    starting_first_run();
    candidate.launch(buffers.slots, setup.vars);
    dev.synchronize(hang_timeout(setup));
    result.outputs.resize(setup.slots.size());
    std::vector<void*> host(setup.slots.size(), nullptr);
    for (std::size_t k = 0; k < setup.slots.size(); ++k) {
      if (!setup.slots[k].written) continue;
      result.outputs[k].resize(setup.slots[k].size_bytes);
      device_.copy_out(result.outputs[k].data(), buffers.slots[k], setup.slots[k].size_bytes);
      host[k] = result.outputs[k].data();
    }
    if (setup.hook) setup.hook(opts, host);
    result.seconds = seconds_of(candidate, buffers.slots, setup.vars, hang_timeout(setup));
  } catch (const device_error& e) {
    // The GPU stopped the queue (a fault, or a wave the emulated GPU took for an endless loop),
    // or the wait saw no progress: restart the queue for the next candidate.
    const std::string what = e.what();
    const bool hang = is_hang(what);
    result = {};
    result.outcome = hang ? tune::trial_result::status::timed_out : tune::trial_result::status::crashed;
    result.detail = "GPU " + std::string(hang ? "hang" : "fault") + ": " + what;
    if (dev.compute().is_failed()) dev.recover_compute();
    return result;
  }
  result.outcome = tune::trial_result::status::ok;
  return result;
}

double am_candidate_runner::seconds_of(program& candidate, std::span<void* const> buffers,
                                       std::span<const std::int64_t> vars, std::chrono::milliseconds timeout) {
  am_device& dev = device_.device();
  if (stamps_.bytes == 0) {
    stamps_ = dev.allocate(4096, true);
    const queue::queue_memory mem = dev.host_memory(stamps_);
    before_ = std::make_unique<queue::gpu_signal>("beam", "timestamp before", mem.slice(0, queue::gpu_signal::size_bytes));
    after_ = std::make_unique<queue::gpu_signal>("beam", "timestamp after", mem.slice(64, queue::gpu_signal::size_bytes));
  }
  double best = std::numeric_limits<double>::infinity();
  queue::cmd_buffer stamp;
  for (int i = 0; i < timed_runs; ++i) {
    stamp.clear();
    queue::emit_timestamp_pm4(stamp, *before_);
    dev.compute().submit(stamp);
    candidate.launch(buffers, vars);
    stamp.clear();
    queue::emit_timestamp_pm4(stamp, *after_);
    dev.compute().submit(stamp);
    dev.synchronize(timeout);
    const std::uint64_t t0 = before_->timestamp(), t1 = after_->timestamp();
    if (t1 >= t0) best = std::min(best, double(t1 - t0) / (queue::gpu_signal::timestamp_ticks_per_us * 1e6));
  }
  // Not the candidate's doing, so not a device_error (which would count as its fault): the search
  // logs it and skips the candidate.
  if (best == std::numeric_limits<double>::infinity())
    throw std::runtime_error(str(device_.name(), ": every pair of GPU timestamps around the dispatch ran backwards"));
  return best;
}

}  // namespace tg::amd
