// cpu_tuning.cpp: the CPU device's part in tuning (runtime/tune): its cache target names the ISA
// level, the host CPU and its feature set, and its candidates run in forked workers compiled for
// a one-thread CPU device (fork_runner.hpp says why one thread).
#include <cstdio>
#include <tg/core/hash.hpp>
#include <tg/device.hpp>
#include "drivers/cpu/cpu_target.hpp"
#include "runtime/opt/target_opts.hpp"
#include "runtime/tune/fork_runner.hpp"
#include "runtime/tune/tuned_compile.hpp"

namespace tg::cpu {
namespace {

// "CPU avx512 znver4 1a2b...": the features go in as a hash, as the list is long; two hosts
// with the same level but other features (or TG_CPU_FEATURES caps) never share entries.
std::string tuning_target(backend&) {
  const cpu_target& t = host_cpu_target();
  std::uint64_t h = fnv_offset;
  for (const std::string& f : t.features) h = fnv_bytes(f + ",", h);
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(h));
  return "CPU " + t.level + " " + t.cpu + " " + hash;
}

// What the pipeline picks for the CPU by itself (runtime/opt/target_opts.hpp): the author's
// shape, else the heuristic's.
codegen::kernel_opts default_opts(const kernel_source& source) {
  opt::target_traits host;
  host.isa = host_cpu_target().isa();
  return opt::choose_opts_for(host, source);
}

const tune::tuner_registration cpu_tuning("CPU", {
    .target = tuning_target,
    .make_runner = [](backend&) { return std::make_unique<tune::fork_runner>(device("CPU", {.threads = 1}), default_opts); },
});

}  // namespace
}  // namespace tg::cpu
