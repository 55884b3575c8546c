// emu_candidate_runner.cpp: candidates on an emulated GPU of the runner's own (see emu_candidate_runner.hpp).
#include "drivers/emu/emu_candidate_runner.hpp"

namespace tg::emu {
namespace {

constexpr std::uint64_t runner_vram = 2ull << 30;

std::shared_ptr<amd::am_backend> runner_device(const std::string& processor) {
  return std::make_shared<emu_device>(emu_device_config{.gen = emulated_processor_gen(processor).value_or(gfx_gen::gfx11),
                                                        .processor = processor,
                                                        .bus = emulated_bus::pci,
                                                        .vram_bytes = runner_vram});
}

}  // namespace

std::string emulated_tuning_target(const std::string& processor) {
  return "AMD:EMU " + processor + " modeled " + shader::modeled_card_for(processor).name;
}

emu_candidate_runner::emu_candidate_runner(const std::string& processor)
    : am_candidate_runner(runner_device(processor)), card_(shader::modeled_card_for(processor)) {
  device().emulated_gpu().observe_dispatches([this](const shader::launch&, const shader::dispatch_counters& k) {
    last_ = k;
    dispatches_.fetch_add(1, std::memory_order_release);
  });
}

emu_candidate_runner::~emu_candidate_runner() { device().emulated_gpu().observe_dispatches({}); }

void emu_candidate_runner::starting_first_run() { before_ = dispatches_.load(std::memory_order_acquire); }

double emu_candidate_runner::seconds_of(program&, std::span<void* const>, std::span<const std::int64_t>,
                                        std::chrono::milliseconds) {
  // An empty grid dispatches nothing: it costs the fixed dispatch time only.
  const bool dispatched = dispatches_.load(std::memory_order_acquire) > before_;
  return dispatched ? shader::model(card_, last_).total_s : shader::dispatch_seconds;
}

}  // namespace tg::emu
