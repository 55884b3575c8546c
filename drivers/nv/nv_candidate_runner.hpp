// nv_candidate_runner.hpp: BEAM's runner for NVIDIA GPUs (runtime/tune/candidate_runner.hpp).
//
// Candidates are compiled here, to PTX (nv_ptx.hpp: the NV device's own renderer and traits), and
// run in a worker process with a CUDA context of its own (tg-nv-worker, nv_worker_main.cpp says
// why): it loads the PTX, runs the kernel once on stand-in buffers of the real sizes for its
// outputs (compared with the default's by beam_search), then times timed_runs more runs with CUDA
// events around each, on the GPU's clock. What a bad candidate does ends only the worker:
//   the driver refuses its PTX or its launch   -> failed ("the driver refused it: ...")
//   it faults the GPU                          -> crashed ("GPU fault: cuStreamSynchronize: ...");
//                                                 the worker exits, the next candidate starts another
//   it outlives the trial's timeout            -> timed_out ("GPU hang: ..."); the worker is killed
//   the worker itself dies                     -> crashed ("the BEAM worker died: signal 11 ...")
// The user's device, its buffers and graphs, are never touched: a search can run while the model
// is loaded on the same card (the candidates then share the GPU with the user's work).
//
//   tg::nv::nv_candidate_runner runner(nv);    // nv: the nv_backend being tuned
//   auto found = tg::tune::beam_search(runner, source, slot_count, vars, {.width = 2});
#pragma once
#include <memory>
#include <vector>

#include "drivers/nv/nv_backend.hpp"
#include "drivers/nv/nv_worker.hpp"
#include "runtime/tune/candidate_runner.hpp"

namespace tg::nv {

class nv_ptx_renderer;  // nv_ptx.hpp: kept out of this header, which tests include without LLVM's

class nv_candidate_runner final : public tune::candidate_runner {
 public:
  static constexpr int timed_runs = 5;

  // For the GPU behind `device` (its card and ordinal are copied: the runner outlives no device
  // it needs, and serves every device of the same tuning target).
  explicit nv_candidate_runner(const nv_backend& device);
  ~nv_candidate_runner() override;

  codegen::kernel_opts default_opts(const kernel_source& source) override;
  codegen::kernel_opts normalize(const codegen::kernel_opts& opts, const kernel_source& source) override;
  std::vector<codegen::kernel_opts> neighbours(const codegen::kernel_opts& from, const kernel_source& source) override;
  // A program that holds the PTX (its launch refuses: it runs only in the worker).
  std::shared_ptr<program> compile(const kernel_source& source) override;
  // device_error when no worker can be started (no tg-nv-worker, no GPU): the search ends.
  tune::trial_result run(program& candidate, const codegen::kernel_opts& opts, const tune::trial_setup& setup) override;

  int worker_starts() const { return worker_.starts(); }

 private:
  void send_slots(const tune::trial_setup& setup);

  std::unique_ptr<nv_ptx_renderer> ptx_;
  nv_worker worker_;
  // What the running worker holds as its stand-ins: sent again only when a search changes them.
  std::vector<std::vector<std::byte>> sent_inputs_;
  std::vector<bool> sent_written_;
};

// The tuning cache's target for a card (nv_tuning.cpp): "NV NVIDIA H200 sm_90 132 SMs".
std::string nv_tuning_target(const nv_backend& device);

}  // namespace tg::nv
