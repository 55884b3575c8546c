// gpu.cpp: the emulated GPU's public face: BAR accessors, kernels, stepping and the worker thread
// (see gpu.hpp). Register behaviours live in gpu_registers.cpp.
#include "drivers/emu/gpu.hpp"
#include "drivers/emu/gpu_lock.hpp"

#include <algorithm>
#include <tg/core/hash.hpp>
#include <utility>

namespace tg::emu {

gpu::gpu(const gpu_config& config)
    : config_(config),
      core_(std::make_unique<gpu_core>(personality_of(config.gen, config.processor), config.vram_bytes, config.doorbell_bytes,
                                        config.shader_threads)) {
  if (config.mmio_bytes == 0 || config.mmio_bytes % 4 != 0)
    throw usage_error(str("emu: an MMIO BAR of ", config.mmio_bytes, " bytes; it must be a positive multiple of 4"));
  psp_ = std::make_unique<psp_model>(*core_);
  smu_ = std::make_unique<smu_model>(*core_);
  ih_ = std::make_unique<ih_ring>(*core_);
  core_->gmmu.on_fault([ih = ih_.get()](const fault_event& e) { ih->post_fault(e); });
  install_register_behaviours();
  write_discovery_table();
}

gpu::~gpu() { stop(); }

// ---- BARs

void gpu::write_doorbell64(std::uint64_t byte_offset, std::uint64_t value) {
  {
    lock l(*this);
    core_->doorbells.store64(byte_offset, value);
    kicked_ = true;
  }
  wake_.notify_one();
}

std::uint64_t gpu::read_doorbell64(std::uint64_t byte_offset) {
  lock l(*this);
  return core_->doorbells.load64(byte_offset);
}

std::uint32_t gpu::read_register(std::uint32_t index) {
  lock l(*this);
  if (off_bus()) return 0xFFFFFFFFu;  // a completion nobody answers: all ones
  return core_->regs.read(index);
}

void gpu::write_register(std::uint32_t index, std::uint32_t value) {
  {
    lock l(*this);
    if (off_bus()) {
      ++core_->stats.writes_lost_in_reset;
      return;
    }
    core_->regs.write(index, value);
    settle();
    retired_.clear();
    kicked_ = true;
  }
  wake_.notify_one();
}

namespace {

void check_mmio(std::uint64_t byte_offset, std::uint64_t mmio_bytes) {
  if (byte_offset % 4 != 0 || byte_offset >= mmio_bytes)
    throw usage_error(str("emu: MMIO access at byte ", hex{byte_offset}, " is not a dword inside the ",
                          mmio_bytes, "-byte register BAR (registers beyond it go through MM_INDEX / MM_DATA)"));
}

}  // namespace

std::uint32_t gpu::mmio_read32(std::uint64_t byte_offset) {
  check_mmio(byte_offset, config_.mmio_bytes);
  return read_register(std::uint32_t(byte_offset / 4));
}

void gpu::mmio_write32(std::uint64_t byte_offset, std::uint32_t value) {
  check_mmio(byte_offset, config_.mmio_bytes);
  write_register(std::uint32_t(byte_offset / 4), value);
}

void gpu::attach_system_bus(system_bus* bus) {
  lock l(*this);
  core_->gmmu.attach(bus);
}

// ---- running

run_summary gpu::run_queues(std::size_t max_packets) {
  // A packet can write any register (WAIT_REG_MEM's write form), so engines may be created or
  // retired while one runs: iterate over a snapshot, and destroy retired engines afterwards.
  struct executing {
    explicit executing(gpu& g) : g_(g) { g_.executing_thread_ = std::this_thread::get_id(); }
    ~executing() {
      g_.executing_thread_ = std::thread::id{};
      g_.retired_.clear();
    }
    gpu& g_;
  } guard(*this);
  constexpr std::size_t slice = 256;  // packets per queue per round, so queues interleave
  run_summary total;
  for (;;) {
    std::vector<std::pair<queue_engine*, bool>> queues;  // (queue, slowed)
    bool worker = std::this_thread::get_id() == worker_.get_id();
    if (!compute_frozen_)  // freeze_engine: fault injection
      for (auto& [bank, q] : compute_) queues.emplace_back(q.get(), worker && compute_delay_.count() > 0);
    if (sdma_ && !sdma_frozen_) queues.emplace_back(sdma_.get(), worker && sdma_delay_.count() > 0);
    bool progress = false, waiting = false;
    for (auto [q, slowed] : queues) {
      progress |= q->poll_doorbell();
      queue_engine::run_result r = q->run(slowed ? 1 : slice);
      if (slowed && r.packets > 0) slowed_this_round_ = true;
      total.packets += r.packets;
      progress |= r.packets > 0;
      waiting |= r.waiting;
    }
    total.waiting = waiting;
    if (!progress || total.packets >= max_packets || slowed_this_round_) break;
  }
  return total;
}

run_summary gpu::step_until_idle() {
  lock l(*this);
  run_summary r = run_queues(SIZE_MAX);
  settle();
  return r;
}

void gpu::start() {
  lock l(*this);
  if (worker_.joinable()) return;
  stopping_ = false;
  worker_ = std::thread(&gpu::worker, this);
}

void gpu::stop() {
  {
    lock l(*this);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

bool gpu::running() const {
  lock l(*this);
  return worker_.joinable() && !stopping_;
}

void gpu::worker() {
  std::unique_lock<std::mutex> l(mutex_);
  while (!stopping_) {
    kicked_ = false;
    run_summary r;
    try {
      r = run_queues(4096);
      settle();
    } catch (const std::exception& e) {  // engines record their own faults; this is a last resort
      fault_record f{fault_kind::bad_packet, engine_id::compute};
      f.message = str("emu worker: ", e.what(), "; the worker stopped (step_until_idle still works)");
      core_->faults.push_back(std::move(f));
      stopping_ = true;
      break;
    }
    if (r.packets > 0) {  // let the host in between batches
      bool slowed = std::exchange(slowed_this_round_, false);
      auto delay = std::max(compute_delay_, sdma_delay_);
      l.unlock();
      if (slowed) std::this_thread::sleep_for(delay);  // slow_engine: fault injection
      else std::this_thread::yield();
      l.lock();
      continue;
    }
    wake_.wait_for(l, r.waiting ? config_.busy_poll : config_.idle_poll, [this] { return stopping_ || kicked_; });
  }
}

// ---- fault injection

void gpu::freeze_engine(engine_id engine, bool frozen) {
  {
    lock l(*this);
    (engine == engine_id::compute ? compute_frozen_ : sdma_frozen_) = frozen;
    kicked_ = true;  // a thawed engine may have doorbells waiting
  }
  wake_.notify_one();
}

void gpu::slow_engine(engine_id engine, std::chrono::microseconds delay) {
  {
    lock l(*this);
    (engine == engine_id::compute ? compute_delay_ : sdma_delay_) = delay;
    kicked_ = true;
  }
  wake_.notify_one();
}

// ---- what happened

std::vector<fault_record> gpu::faults() const {
  lock l(*this);
  return core_->faults;
}

void gpu::clear_faults() {
  lock l(*this);
  core_->faults.clear();
}

std::vector<interrupt_record> gpu::interrupts() const {
  lock l(*this);
  return core_->interrupts;
}

gpu_stats gpu::stats() const {
  lock l(*this);
  return core_->stats;
}

shader::dispatch_counters gpu::last_dispatch() const {
  lock l(*this);
  return core_->last_dispatch;
}

void gpu::observe_dispatches(dispatch_observer observer) {
  lock l(*this);
  core_->dispatch_observer = std::move(observer);
}

tlb_stats gpu::tlb() const {
  lock l(*this);
  return core_->gmmu.stats();
}

std::optional<queue_status> gpu::compute_queue(std::uint32_t me, std::uint32_t pipe, std::uint32_t queue) const {
  lock l(*this);
  auto it = compute_.find(hqd_bank_of(me, pipe, queue));
  if (it == compute_.end()) return std::nullopt;
  return it->second->status();
}

std::optional<queue_status> gpu::sdma_queue() const {
  lock l(*this);
  if (!sdma_) return std::nullopt;
  return sdma_->status();
}

}  // namespace tg::emu
