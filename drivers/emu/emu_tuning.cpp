// emu_tuning.cpp: AMD:EMU's part in tuning (runtime/tune/tuned_compile.hpp): its cache target names
// the emulated processor and the card its modeled cost stands for, and its candidates run on an
// emulated GPU of that processor kept for the search (emu_candidate_runner.hpp), never on the
// device being tuned. A real card ("AMD") has a tuner of its own (drivers/amd/am_tuning.cpp), and
// the emulated targets' results are never served to it.
#include <tg/core/error.hpp>

#include "drivers/emu/emu_candidate_runner.hpp"
#include "runtime/tune/tuned_compile.hpp"

namespace tg::emu {
namespace {

// What the AM driver read from the card's discovery table: the emulated GPU's processor. (An
// AMD:EMU device is an am_backend; tests build some on machines of their own.)
std::string processor_of(backend& device) {
  auto* amd = dynamic_cast<amd::am_backend*>(&device);
  if (amd == nullptr) throw usage_error("tune: the AMD:EMU tuner was given a device of another kind (" + device.name() + ")");
  return amd->device().info().gfx_target;
}

const tune::tuner_registration emu_tuning("AMD:EMU", {
    .target = [](backend& device) { return emulated_tuning_target(processor_of(device)); },
    .make_runner = [](backend& device) -> std::unique_ptr<tune::candidate_runner> {
      return std::make_unique<emu_candidate_runner>(processor_of(device));
    },
});

}  // namespace
}  // namespace tg::emu
