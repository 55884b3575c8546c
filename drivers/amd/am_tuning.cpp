// am_tuning.cpp: a real AMD card's part in tuning (runtime/tune/tuned_compile.hpp). BEAM runs the
// candidates on the card being tuned (am_candidate_runner.hpp: timed by GPU timestamps, a faulting
// or hanging candidate skipped and the queue recovered), made for each search since it uses the
// user's device. The cache target names the processor and the size of its shader array, so cards
// of one processor with other CU counts (a 7900 XTX and a 7900 GRE are both gfx1100) are tuned
// apart; AMD:EMU's targets (drivers/emu/emu_tuning.cpp) never match these.
#include <tg/core/error.hpp>

#include "drivers/amd/am_candidate_runner.hpp"
#include "runtime/tune/tuned_compile.hpp"

namespace tg::amd {
namespace {

am_backend& amd_of(backend& device) {
  auto* amd = dynamic_cast<am_backend*>(&device);
  if (amd == nullptr) throw usage_error("tune: the AMD tuner was given a device of another kind (" + device.name() + ")");
  return *amd;
}

const tune::tuner_registration am_tuning("AMD", {
    .target = [](backend& device) { return card_tuning_target(amd_of(device)); },
    .make_runner = [](backend& device) -> std::unique_ptr<tune::candidate_runner> {
      return std::make_unique<am_candidate_runner>(amd_of(device));
    },
    .runs_on_tuned_device = true,
});

}  // namespace

// "AMD gfx1100 96 CUs" (am_candidate_runner.hpp): the CUs as the discovery table's GC info counts them (shader engines x
// arrays per engine x CUs per array), before harvesting; the processor alone without that info.
std::string card_tuning_target(am_backend& device) {
  std::string target = "AMD " + device.device().info().gfx_target;
  if (const auto& gc = device.device().context().disc.gc)
    target += str(" ", gc->num_se * gc->sh_per_se * gc->cu_per_sh, " CUs");
  return target;
}

}  // namespace tg::amd
