// tuned_compile.hpp: where tuning meets the device (the one call device::compile makes): a kernel
// compiles with the loop shape the tuning cache holds for it, or, with TG_BEAM=n, as a program
// that runs a BEAM search at its first launch, stores the winner in the cache and from then on
// launches the winner. A backend takes part once it registers a tuner (drivers/cpu/cpu_tuning.cpp).
//
// Why at the first launch: a kernel's variables (a sequence length) set its loop bounds and
// buffer sizes, and only a launch has their values; device::prepare compiles without them.
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <tg/device/backend.hpp>
#include "runtime/tune/candidate_runner.hpp"

namespace tg::tune {

// What tuning needs from a kind of device.
struct tuner {
  // The target a device's kernels are tuned for (the cache key): results are served only to the
  // same one, and devices of one target share a runner.
  std::function<std::string(backend& device)> target;
  // How candidates for that target are compiled and timed; empty: cached results are used, BEAM
  // never runs.
  std::function<std::unique_ptr<candidate_runner>(backend& device)> make_runner;
  // false: the runner opens a device of its own (the CPU's forked workers, AMD:EMU's emulated
  // GPU) and is made once per target. true: it runs candidates on the device it is given (a real
  // card: there is no other to run on), so it is made for each search and dropped after it.
  bool runs_on_tuned_device = false;
};

// `backend_name` as devices register (backend.hpp): a device's backend name picks the tuner with
// the longest matching prefix that ends at a ':' ("AMD:USB:0" -> "AMD"; "AMD:EMU" -> "AMD:EMU").
void register_tuner(const std::string& backend_name, tuner t);
struct tuner_registration {
  tuner_registration(const std::string& backend_name, tuner t) { register_tuner(backend_name, std::move(t)); }
};

// TG_BEAM, read once: the beam width, 0 when BEAM is off.
int beam_width();

// The kernel compiled by `owner` with its tuned loop shape, or a searching program (BEAM on and
// nothing cached); nullptr when tuning does not apply, and the caller compiles as usual.
std::shared_ptr<program> compile_tuned(const std::shared_ptr<backend>& owner, const kernel_source& source);

// The parts of a fused launch (device::prepare_fused, each specialised to its variables) given
// the schedules the tuning cache holds for them as kernels of their own, or, with BEAM on and
// nothing cached, what a search of each finds (and stores). True when any part's schedule came
// from tuning; false leaves `source` as it was (no tuner for the backend, nothing cached, BEAM off).
bool tune_fused_parts(const std::shared_ptr<backend>& owner, fused_source& source);

// The backend's own program behind one compile_tuned made: for code that needs the backend's
// type (a CPU graph captures cpu_programs). A searching program runs its search now, with
// `vars`, if no launch has yet; any other program comes back as it is.
std::shared_ptr<program> resolve_tuned(const std::shared_ptr<program>& compiled, std::span<const std::int64_t> vars);

// What tuning did in this process (tests, -v output).
struct tune_stats {
  int cache_hits = 0;  // kernels compiled with a cached loop shape
  int searches = 0;    // BEAM searches run
};
tune_stats stats();

}  // namespace tg::tune
