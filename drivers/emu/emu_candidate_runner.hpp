// emu_candidate_runner.hpp: BEAM's runner for AMD:EMU (runtime/tune/candidate_runner.hpp). Each
// candidate runs on an emulated GPU of the runner's own (the processor of the device being tuned,
// on the emulated PCI host, 2 GiB of VRAM for an 8B model's largest matvec), once: the
// interpreter is deterministic, and what ranks the candidates is the modeled time of that
// dispatch on the card the processor stands for (shader/modeled_cost.hpp), not the interpreter's
// wall time, which says nothing about a card's.
//
// A candidate that faults the GPU (a page fault, an instruction the GPU cannot run) or hangs it
// (a wave in an endless loop, which the emulated GPU stops and reports as a fault; a dispatch
// that outlives the queue timeout) fails its queue: the runner reports the driver's message,
// restarts the compute queue (am_device::recover_compute) and the search goes on. The user's
// device never runs a candidate.
//
//   tg::emu::emu_candidate_runner runner("gfx1100");
//   auto found = tg::tune::beam_search(runner, source, slot_count, vars, {.width = 2});
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "drivers/emu/emu_device.hpp"
#include "drivers/emu/shader/modeled_cost.hpp"
#include "runtime/tune/candidate_runner.hpp"

namespace tg::emu {

class emu_candidate_runner final : public tune::candidate_runner {
 public:
  explicit emu_candidate_runner(const std::string& processor);
  ~emu_candidate_runner() override;

  codegen::kernel_opts default_opts(const kernel_source& source) override;
  codegen::kernel_opts normalize(const codegen::kernel_opts& opts, const kernel_source& source) override;
  std::vector<codegen::kernel_opts> neighbours(const codegen::kernel_opts& from, const kernel_source& source) override;
  std::shared_ptr<program> compile(const kernel_source& source) override { return device_->compile(source); }
  // trial_result::seconds is the modeled time; crashed for a GPU fault, timed_out for a hang.
  tune::trial_result run(program& candidate, const codegen::kernel_opts& opts, const tune::trial_setup& setup) override;

  emu_device& device() { return *device_; }
  const shader::card_model& card() const { return card_; }

 private:
  std::shared_ptr<emu_device> device_;
  const shader::card_model& card_;
  // Written by the GPU's dispatch observer on the GPU's thread: the counters, then the count.
  shader::dispatch_counters last_;
  std::atomic<std::uint64_t> dispatches_{0};
};

// The tuning cache's target for an emulated processor: "AMD:EMU gfx1100 modeled RX 7900 XTX".
// Never a real card's, so what BEAM finds here is never served to one.
std::string emulated_tuning_target(const std::string& processor);

}  // namespace tg::emu
