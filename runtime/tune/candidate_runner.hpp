// candidate_runner.hpp: how BEAM compiles and times one candidate loop shape on a kind of device,
// without letting a bad candidate take the process (or the device) down with it.
//
// The CPU's runner (fork_runner.hpp) runs each candidate in a forked worker process and moves
// through loop shapes (candidates.hpp). AMD:EMU's (drivers/emu/emu_candidate_runner.hpp) runs them
// on an emulated GPU of its own, ranks them by the modeled cost, recovers the GPU after a
// faulting or hanging candidate, and moves through GPU schedules (gpu_candidates.hpp).
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>
#include <tg/device/backend.hpp>
#include "runtime/codegen/llvm_kernel.hpp"
#include "runtime/tune/candidates.hpp"
#include "runtime/tune/scratch_buffers.hpp"

namespace tg::tune {

// Test-only injection point: called after a candidate's first run, before its outputs are taken,
// with its buffers (the CPU's, in the worker; a GPU runner's host copies of the written slots,
// nullptr for the others); tests plant crashes, hangs and wrong results with it. Users never set
// it (BEAM through the device leaves it empty).
using worker_hook = std::function<void(const codegen::kernel_opts& opts, std::span<void* const> buffers)>;

// What one candidate is run on: stand-in buffers and the launch's variable values.
struct trial_setup {
  std::span<const slot_info> slots;
  const std::vector<std::vector<std::byte>>* inputs = nullptr;  // one per slot, copied before the run
  std::span<const std::int64_t> vars;
  std::chrono::milliseconds timeout{2000};  // for the whole run, timing included
  worker_hook hook;
};

struct trial_result {
  enum class status { ok, crashed, timed_out, failed };
  status outcome = status::failed;
  double seconds = 0;  // the fastest of the timed runs
  std::vector<std::vector<std::byte>> outputs;  // per slot after the first run; empty unless written
  std::string detail;  // why it was not ok: "signal 11 (Segmentation fault)", "exit status 3"
};

class candidate_runner {
 public:
  virtual ~candidate_runner() = default;
  // The backend's own choice for the kernel: the search starts there and compares with it.
  virtual codegen::kernel_opts default_opts(const kernel_source& source) = 0;
  // The search's moves for this kind of device: one form per schedule, and the neighbours of one.
  // By default the CPU's loop shapes (candidates.hpp).
  virtual codegen::kernel_opts normalize(const codegen::kernel_opts& opts, const kernel_source& source) {
    return tune::normalize(opts, source.global_ranges);
  }
  virtual std::vector<codegen::kernel_opts> neighbours(const codegen::kernel_opts& from, const kernel_source& source) {
    return tune::neighbours(from, output_bounds(source.nodes, source.global_ranges));
  }
  // Compiles the kernel with the schedule in `source` (source_with below); may throw.
  virtual std::shared_ptr<program> compile(const kernel_source& source) = 0;
  // Runs it once for its outputs, then a few times for its time. Never throws for what the
  // candidate does: a crash or a hang is an outcome.
  virtual trial_result run(program& candidate, const codegen::kernel_opts& opts, const trial_setup& setup) = 0;
};

// `source` with `opts` as its schedule: the CPU's loop shape and the GPU's schedule both (each
// backend reads its own part; kernel_source::group_lanes).
inline kernel_source source_with(const kernel_source& source, const codegen::kernel_opts& opts) {
  kernel_source s{source.nodes, source.global_ranges, source.name, opts.upcast, opts.vector_lanes, opts.panel};
  s.group_lanes = opts.group_lanes;
  s.reduce_unroll = opts.reduce_unroll;
  s.nested_lanes = opts.nested_lanes;
  return s;
}

}  // namespace tg::tune
