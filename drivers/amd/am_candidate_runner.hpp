// am_candidate_runner.hpp: BEAM's runner on an AMD GPU (runtime/tune/candidate_runner.hpp).
//
// Each candidate schedule runs on stand-in buffers of the kernel's real sizes: once for its
// outputs (compared with the default's by beam_search), then timed. On the user's card (tg's
// "AMD" device, drivers/amd/am_tuning.cpp) the time is the GPU's: two timestamps around the
// candidate's dispatch in the compute queue, each a RELEASE_MEM at end of pipe that writes the
// GPU clock once everything before it finished (tinygrad/runtime/ops_amd.py:
// AMDComputeQueue.timestamp), the fastest of timed_runs. The host's clock would count the launch
// and the wait, tens of microseconds a round trip behind the USB bridge, more than most kernels.
// AMD:EMU's runner (drivers/emu/emu_candidate_runner.hpp) is this one on an emulated GPU of its
// own, timed by the modeled cost of the first run instead.
//
// A candidate that faults the GPU (a page fault, an instruction it cannot run) or hangs it (its
// dispatch outlives the trial's timeout) fails the compute queue. The runner reports the driver's
// message as the candidate's outcome, recovers the queue (am_device::recover_compute) and the
// search goes on. The user's programs and graphs survive the recovery: the queue's timeline goes
// on in a new epoch (am_device.hpp). What a real card does after a hang is not known here: the
// MEC is reset, but waves already running are not killed (Linux resets a hung queue through MES
// or the whole GPU); only the emulated GPU, which stops such a wave itself, has run this path.
//
//   tg::amd::am_candidate_runner runner(amd);   // amd: the am_backend being tuned
//   auto found = tg::tune::beam_search(runner, source, slot_count, vars, {.width = 2});
#pragma once
#include <memory>

#include "drivers/amd/am_backend.hpp"
#include "runtime/queue/gpu_signal.hpp"
#include "runtime/tune/candidate_runner.hpp"

namespace tg::amd {

class am_candidate_runner : public tune::candidate_runner {
 public:
  static constexpr int timed_runs = 5;

  // Candidates on the device being tuned (not owned: it must outlive the runner).
  explicit am_candidate_runner(am_backend& device);
  ~am_candidate_runner() override;

  codegen::kernel_opts default_opts(const kernel_source& source) override;
  codegen::kernel_opts normalize(const codegen::kernel_opts& opts, const kernel_source& source) override;
  std::vector<codegen::kernel_opts> neighbours(const codegen::kernel_opts& from, const kernel_source& source) override;
  std::shared_ptr<program> compile(const kernel_source& source) override { return device_.compile(source); }
  // Work queued on the device before is waited for first (its failure is not the candidate's and
  // throws). trial_result::seconds from seconds_of; crashed for a GPU fault, timed_out for a hang.
  tune::trial_result run(program& candidate, const codegen::kernel_opts& opts, const tune::trial_setup& setup) override;

  am_backend& backend_device() { return device_; }

 protected:
  // A device of the runner's own, kept alive by it (AMD:EMU's runner).
  explicit am_candidate_runner(std::shared_ptr<am_backend> own);

  // Called just before a candidate's first launch.
  virtual void starting_first_run() {}
  // How long a run may make no progress before it counts as a hang: the trial's timeout.
  virtual std::chrono::milliseconds hang_timeout(const tune::trial_setup& setup) { return setup.timeout; }
  // The candidate's time, called after its first run finished and its outputs were read, with
  // its buffers still bound; device_error for a fault or hang while timing. Here: GPU timestamps.
  virtual double seconds_of(program& candidate, std::span<void* const> buffers, std::span<const std::int64_t> vars,
                            std::chrono::milliseconds timeout);

 private:
  std::shared_ptr<am_backend> own_;  // declared first: outlives device_ and the signals' memory
  am_backend& device_;
  allocation stamps_;                // CPU-visible, holding the two timestamp signals
  std::unique_ptr<queue::gpu_signal> before_, after_;
};

// The tuning cache's target for a card (am_tuning.cpp): "AMD gfx1100 96 CUs". What BEAM finds on
// one card is served to cards of the same processor and shader array only.
std::string card_tuning_target(am_backend& device);

}  // namespace tg::amd
