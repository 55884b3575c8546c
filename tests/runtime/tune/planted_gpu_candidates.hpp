// planted_gpu_candidates.hpp: a GPU candidate runner that compiles other kernels for planted
// schedules, one that stores far outside every mapping (a GPU page fault), one whose loop outlasts
// the GPU's patience (a hang) and, where candidates run in a worker process (NV), one named for
// the stand-in driver to crash the worker with (tests/drivers/nv/fake_libcuda.cpp: on a real card
// it is the faulting kernel); and delegates everything else to the runner it wraps (AMD:EMU's
// own, one on the user's AMD device, the NV runner); and the search the GPU BEAM tests run with
// them planted. The planted kernels are named planted_fault, planted_hang and planted_crash.
#pragma once
#include <tg/device.hpp>
#include "runtime/opt/target_opts.hpp"
#include "runtime/tune/candidate_runner.hpp"
#include "runtime/tune/opts_text.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace tune_test {

class planting_runner final : public tg::tune::candidate_runner {
 public:
  explicit planting_runner(tg::tune::candidate_runner& inner) : inner(inner) {}

  tg::tune::candidate_runner& inner;
  tg::codegen::kernel_opts faults, hangs, crashes;

  tg::codegen::kernel_opts default_opts(const tg::kernel_source& s) override { return inner.default_opts(s); }
  tg::codegen::kernel_opts normalize(const tg::codegen::kernel_opts& o, const tg::kernel_source& s) override {
    return inner.normalize(o, s);
  }
  std::vector<tg::codegen::kernel_opts> neighbours(const tg::codegen::kernel_opts& o, const tg::kernel_source& s) override {
    return inner.neighbours(o, s);
  }
  std::shared_ptr<tg::program> compile(const tg::kernel_source& s) override {
    const tg::codegen::kernel_opts opts = inner.normalize(tg::opt::gpu_schedule_of(s), s);
    if (opts == faults) return compile_planted(faulting_kernel(), "planted_fault");
    if (opts == hangs) return compile_planted(endless_kernel(), "planted_hang");
    if (opts == crashes) return compile_planted(faulting_kernel(), "planted_crash");
    return inner.compile(s);
  }
  tg::tune::trial_result run(tg::program& p, const tg::codegen::kernel_opts& o, const tg::tune::trial_setup& s) override {
    return inner.run(p, o, s);
  }

 private:
  std::shared_ptr<tg::program> compile_planted(const tg::ast::kernel& k, const char* name) {
    return inner.compile({k.nodes, k.global_ranges, name});
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

// BEAM (width 2) over `source` with the default's first three neighbours planted: one faults the
// GPU, one hangs it, one computes a wrong result (an output element changed after its run). Each
// is skipped with its reason logged; the search finishes with another. Returns what it found.
inline tg::tune::beam_result search_past_planted(planting_runner& runner, const tg::kernel_source& source, int slot_count) {
  const auto first = runner.normalize(runner.default_opts(source), source);
  const auto round_one = runner.neighbours(first, source);
  REQUIRE(round_one.size() >= 4);
  runner.faults = round_one[0];
  runner.hangs = round_one[1];
  const auto wrong = round_one[2];
  tg::tune::beam_options options{.width = 2};
  options.in_worker = [&](const tg::codegen::kernel_opts& c, std::span<void* const> outputs) {
    if (c == wrong) static_cast<float*>(outputs[0])[5] += 1.0f;
  };
  log_capture logged;
  auto found = search_logging_skips(runner, source, slot_count, options);
  REQUIRE(found.has_value());
  CHECK(found->skipped == 3);
  CHECK(found->tried >= 2);
  CHECK(found->best != runner.faults);
  CHECK(found->best != runner.hangs);
  CHECK(found->best != wrong);
  CHECK(logged.count(tg::tune::to_text(runner.faults) + " skipped: GPU fault: ") == 1);
  CHECK(logged.count(tg::tune::to_text(runner.hangs) + " skipped: GPU hang: ") == 1);
  CHECK(logged.count(tg::tune::to_text(wrong) + " skipped: wrong result: slot 0 element 5") == 1);
  for (const std::string& line : logged.lines)
    if (line.find("skipped: ") != std::string::npos) MESSAGE(line);
  return *found;
}

}  // namespace tune_test
