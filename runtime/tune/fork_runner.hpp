// fork_runner.hpp: the host CPU's candidate runner. Each candidate runs in a forked child, so a
// segfault or an endless loop ends only the child (killed at the timeout).
//
// Compiling happens in the parent, on a device whose programs run on the calling thread (a
// one-thread CPU device): after fork() only the forking thread exists in the child, so a program
// that handed work to a thread pool would wait forever for workers that are not there, and the
// JIT's locks may be held by threads that vanished. The child only copies the inputs, calls the
// compiled code, copies the outputs into shared memory and exits with _exit; it takes no lock
// and allocates nothing. Timing on one thread ranks loop shapes as the multi-threaded launch
// would: the threads only split the outermost loop.
#pragma once
#include <functional>
#include <tg/device.hpp>
#include "runtime/tune/candidate_runner.hpp"

namespace tg::tune {

class fork_runner final : public candidate_runner {
 public:
  // `single_thread` compiles the candidates (its programs must not use threads); `defaults`
  // names what its backend picks for a kernel without a loop shape.
  fork_runner(device single_thread, std::function<codegen::kernel_opts(const kernel_source&)> defaults)
      : device_(std::move(single_thread)), defaults_(std::move(defaults)) {}

  codegen::kernel_opts default_opts(const kernel_source& source) override { return defaults_(source); }
  std::shared_ptr<program> compile(const kernel_source& source) override { return device_.impl().compile(source); }
  trial_result run(program& candidate, const codegen::kernel_opts& opts, const trial_setup& setup) override;

 private:
  device device_;
  std::function<codegen::kernel_opts(const kernel_source&)> defaults_;
};

}  // namespace tg::tune
