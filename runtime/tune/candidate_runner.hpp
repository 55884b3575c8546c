// candidate_runner.hpp: how BEAM compiles and times one candidate loop shape on a kind of device,
// without letting a bad candidate take the process (or the device) down with it.
//
// The CPU's runner (fork_runner.hpp) runs each candidate in a forked worker process. A GPU runner
// is later work (issue 15): it would rank by the emulator's modeled cost on AMD:EMU, and recover
// the device after a faulting candidate; it fills this same interface.
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
#include "runtime/tune/scratch_buffers.hpp"

namespace tg::tune {

// Test-only injection point: called in the worker after a candidate's first run, with its
// buffers, before its outputs are taken; tests plant crashes, hangs and wrong results with it.
// Users never set it (BEAM through the device leaves it empty).
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
  // Compiles the kernel with source.upcast / source.vector_lanes as the loop shape; may throw.
  virtual std::shared_ptr<program> compile(const kernel_source& source) = 0;
  // Runs it once for its outputs, then a few times for its time. Never throws for what the
  // candidate does: a crash or a hang is an outcome.
  virtual trial_result run(program& candidate, const codegen::kernel_opts& opts, const trial_setup& setup) = 0;
};

}  // namespace tg::tune
