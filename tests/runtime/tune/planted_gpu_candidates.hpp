// planted_gpu_candidates.hpp: an AMD candidate runner that compiles other kernels for two planted
// schedules, one that stores far outside every mapping (a GPU page fault) and one whose loop
// outlasts the emulated GPU's patience (a hang), and delegates everything else to the runner it
// wraps (AMD:EMU's own, or one on the user's device).
#pragma once
#include <tg/device.hpp>
#include "drivers/amd/am_candidate_runner.hpp"
#include "runtime/opt/target_opts.hpp"
#include "runtime/tune/candidate_runner.hpp"

namespace tune_test {

class planting_runner final : public tg::tune::candidate_runner {
 public:
  explicit planting_runner(tg::amd::am_candidate_runner& inner) : inner(inner) {}

  tg::amd::am_candidate_runner& inner;
  tg::codegen::kernel_opts faults, hangs;

  tg::codegen::kernel_opts default_opts(const tg::kernel_source& s) override { return inner.default_opts(s); }
  tg::codegen::kernel_opts normalize(const tg::codegen::kernel_opts& o, const tg::kernel_source& s) override {
    return inner.normalize(o, s);
  }
  std::vector<tg::codegen::kernel_opts> neighbours(const tg::codegen::kernel_opts& o, const tg::kernel_source& s) override {
    return inner.neighbours(o, s);
  }
  std::shared_ptr<tg::program> compile(const tg::kernel_source& s) override {
    const tg::codegen::kernel_opts opts = inner.normalize(tg::opt::gpu_schedule_of(s), s);
    if (opts == faults) return compile_planted(faulting_kernel());
    if (opts == hangs) return compile_planted(endless_kernel());
    return inner.compile(s);
  }
  tg::tune::trial_result run(tg::program& p, const tg::codegen::kernel_opts& o, const tg::tune::trial_setup& s) override {
    return inner.run(p, o, s);
  }

 private:
  std::shared_ptr<tg::program> compile_planted(const tg::ast::kernel& k) {
    return inner.compile({k.nodes, k.global_ranges, "planted"});
  }
  static tg::ast::kernel faulting_kernel() {
    tg::kernel_builder kb;
    auto i = kb.output_range(64);
    kb.store(0, i + (std::int64_t{1} << 44), kb.load<float>(2, i));  // 64 TiB past the buffer
    return kb.finish();
  }
  static tg::ast::kernel endless_kernel() {
    tg::kernel_builder kb;
    auto i = kb.output_range(32);
    auto r = kb.reduce_range(std::int64_t{1} << 40);
    kb.store(0, i, kb.sum(kb.load<float>(2, (i + r) % 16), r));
    return kb.finish();
  }
};

}  // namespace tune_test
