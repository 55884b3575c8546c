// emu_candidate_runner.hpp: BEAM's runner for AMD:EMU (runtime/tune/candidate_runner.hpp): the AMD
// runner (drivers/amd/am_candidate_runner.hpp) on an emulated GPU of its own (the processor of
// the device being tuned, on the emulated PCI host, 2 GiB of VRAM for an 8B model's largest
// matvec). Each candidate runs once: the interpreter is deterministic, and what ranks the
// candidates is the modeled time of that dispatch on the card the processor stands for
// (shader/modeled_cost.hpp), not the interpreter's wall time, which says nothing about a card's.
//
// A candidate that faults the GPU or hangs it (a wave in an endless loop, which the emulated GPU
// stops and reports as a fault; a dispatch that outlives the trial's timeout) is skipped and the
// compute queue recovered, as on a card. The user's device never runs a candidate.
//
//   tg::emu::emu_candidate_runner runner("gfx1100");
//   auto found = tg::tune::beam_search(runner, source, slot_count, vars, {.width = 2});
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "drivers/amd/am_candidate_runner.hpp"
#include "drivers/emu/emu_device.hpp"
#include "drivers/emu/shader/modeled_cost.hpp"

namespace tg::emu {

class emu_candidate_runner final : public amd::am_candidate_runner {
 public:
  explicit emu_candidate_runner(const std::string& processor);
  ~emu_candidate_runner() override;

  emu_device& device() { return static_cast<emu_device&>(backend_device()); }
  const shader::card_model& card() const { return card_; }

 protected:
  void starting_first_run() override;
  // The device's queue timeout (30 s): the trial's comes from the modeled time, and the
  // interpreter takes far longer than a card; the emulated GPU stops endless loops itself.
  std::chrono::milliseconds hang_timeout(const tune::trial_setup&) override { return device().queue_timeout(); }
  // The modeled time of the candidate's first run (trial_result::seconds).
  double seconds_of(program& candidate, std::span<void* const> buffers, std::span<const std::int64_t> vars,
                    std::chrono::milliseconds timeout) override;

 private:
  const shader::card_model& card_;
  // Written by the GPU's dispatch observer on the GPU's thread: the counters, then the count.
  shader::dispatch_counters last_;
  std::atomic<std::uint64_t> dispatches_{0};
  std::uint64_t before_ = 0;  // dispatches_ before the candidate's first run
};

// The tuning cache's target for an emulated processor: "AMD:EMU gfx1100 modeled RX 7900 XTX".
// Never a real card's, so what BEAM finds here is never served to one.
std::string emulated_tuning_target(const std::string& processor);

}  // namespace tg::emu
