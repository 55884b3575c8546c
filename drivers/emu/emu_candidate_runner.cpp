// emu_candidate_runner.cpp: candidates on an emulated GPU of the runner's own (see emu_candidate_runner.hpp).
#include "drivers/emu/emu_candidate_runner.hpp"

#include <tg/core/error.hpp>
#include <tg/log.hpp>

#include "runtime/opt/target_opts.hpp"
#include "runtime/tune/gpu_candidates.hpp"

namespace tg::emu {
namespace {

constexpr std::uint64_t runner_vram = 2ull << 30;

// Buffers of the runner's device, released on every path out of a run (after a queue failure
// the backend keeps them mapped, as it does for any buffer a failed queue may still use).
struct device_buffers {
  backend& owner;
  std::vector<void*> slots;
  device_buffers(backend& b, std::span<const tune::slot_info> info) : owner(b) {
    // At least 16 bytes each: the kernels' loads assume 16-byte aligned, 16-byte padded buffers.
    for (const tune::slot_info& s : info) slots.push_back(owner.allocate(std::max<std::size_t>(s.size_bytes, 16)));
  }
  ~device_buffers() {
    for (void* p : slots) owner.release(p);
  }
};

}  // namespace

std::string emulated_tuning_target(const std::string& processor) {
  return "AMD:EMU " + processor + " modeled " + shader::modeled_card_for(processor).name;
}

emu_candidate_runner::emu_candidate_runner(const std::string& processor)
    : device_(std::make_shared<emu_device>(emu_device_config{.gen = emulated_processor_gen(processor).value_or(gfx_gen::gfx11),
                                                            .processor = processor,
                                                            .bus = emulated_bus::pci,
                                                            .vram_bytes = runner_vram})),
      card_(shader::modeled_card_for(processor)) {
  device_->emulated_gpu().observe_dispatches([this](const shader::launch&, const shader::dispatch_counters& k) {
    last_ = k;
    dispatches_.fetch_add(1, std::memory_order_release);
  });
}

emu_candidate_runner::~emu_candidate_runner() { device_->emulated_gpu().observe_dispatches({}); }

codegen::kernel_opts emu_candidate_runner::default_opts(const kernel_source& source) {
  kernel_source untuned = source;
  untuned.group_lanes = 0;
  return opt::choose_opts_for(device_->kernel_traits(), untuned);
}

codegen::kernel_opts emu_candidate_runner::normalize(const codegen::kernel_opts& opts, const kernel_source& source) {
  return tune::normalize_gpu(opts, source.global_ranges);
}

std::vector<codegen::kernel_opts> emu_candidate_runner::neighbours(const codegen::kernel_opts& from, const kernel_source& source) {
  const opt::gpu_traits& t = device_->kernel_traits().gpu;
  return tune::gpu_neighbours(from, tune::gpu_space_of(source.nodes, source.global_ranges, t.wave_lanes, t.max_reduce_unroll));
}

tune::trial_result emu_candidate_runner::run(program& candidate, const codegen::kernel_opts& opts,
                                             const tune::trial_setup& setup) {
  tune::trial_result result;
  device_buffers buffers(*device_, setup.slots);
  for (std::size_t k = 0; k < setup.slots.size(); ++k)
    if (!(*setup.inputs)[k].empty()) device_->copy_in(buffers.slots[k], (*setup.inputs)[k].data(), (*setup.inputs)[k].size());
  const std::uint64_t before = dispatches_.load(std::memory_order_acquire);
  try {
    candidate.launch(buffers.slots, setup.vars);
    device_->synchronize();
  } catch (const device_error& e) {
    // The GPU stopped the queue (a fault, or a wave the emulated GPU took for an endless loop),
    // or the wait timed out: restart the queue for the next candidate.
    const std::string what = e.what();
    const bool hang = what.find("endless loop") != std::string::npos || what.find("timed out") != std::string::npos;
    result.outcome = hang ? tune::trial_result::status::timed_out : tune::trial_result::status::crashed;
    result.detail = "GPU " + std::string(hang ? "hang" : "fault") + ": " + what;
    device_->device().recover_compute();
    return result;
  }
  result.outputs.resize(setup.slots.size());
  std::vector<void*> host(setup.slots.size(), nullptr);
  for (std::size_t k = 0; k < setup.slots.size(); ++k) {
    if (!setup.slots[k].written) continue;
    result.outputs[k].resize(setup.slots[k].size_bytes);
    device_->copy_out(result.outputs[k].data(), buffers.slots[k], setup.slots[k].size_bytes);
    host[k] = result.outputs[k].data();
  }
  if (setup.hook) setup.hook(opts, host);
  // An empty grid dispatches nothing: it costs the fixed dispatch time only.
  const bool dispatched = dispatches_.load(std::memory_order_acquire) > before;
  result.seconds = dispatched ? shader::model(card_, last_).total_s : shader::dispatch_seconds;
  result.outcome = tune::trial_result::status::ok;
  return result;
}

}  // namespace tg::emu
