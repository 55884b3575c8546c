// nv_tuning.cpp: NVIDIA GPUs' part in tuning (runtime/tune/tuned_compile.hpp). BEAM runs the
// candidates in a worker process of its own (nv_candidate_runner.hpp), so the runner is made once
// per target and kept, its worker with it, across searches. The target names the card's model,
// its PTX architecture and its SM count: what BEAM finds on one H200 is served to every H200.
#include <tg/core/error.hpp>

#include "drivers/nv/nv_candidate_runner.hpp"
#include "runtime/tune/tuned_compile.hpp"

namespace tg::nv {
namespace {

const nv_backend& nv_of(backend& device) {
  auto* nv = dynamic_cast<nv_backend*>(&device);
  if (nv == nullptr) throw usage_error("tune: the NV tuner was given a device of another kind (" + device.name() + ")");
  return *nv;
}

const tune::tuner_registration nv_tuning("NV", {
    .target = [](backend& device) { return nv_tuning_target(nv_of(device)); },
    .make_runner = [](backend& device) -> std::unique_ptr<tune::candidate_runner> {
      return std::make_unique<nv_candidate_runner>(nv_of(device));
    },
    .runs_on_tuned_device = false,
});

}  // namespace
}  // namespace tg::nv
