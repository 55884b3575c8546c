// gpu.hpp: an emulated AMD GPU (gfx11 or gfx12) that a driver talks to as to the real one:
// VRAM (BAR0), a doorbell page (BAR2) and MMIO registers (BAR5).
//
// Behind the registers are an MMU that walks the page tables the driver wrote in VRAM (with a
// TLB that only an invalidation request refreshes), a compute queue engine per active HQD (PM4)
// and the SDMA0 queue engine, created from the same register writes the driver makes on
// hardware (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c). Dispatched programs run as the machine
// code they are, on the ISA interpreter (drivers/emu/shader): there is no way to stand a host function
// in for a kernel, so a code-generation bug shows here as it would on a card.
// Nothing a driver can write crashes the host: faults are recorded (faults()) and latched in
// registers, written to the IH ring when the driver set one up, and the queue stops.
//
// It also speaks the bring-up protocol of a real card (tinygrad/runtime/support/am/amdev.py: AMDev), so a driver written from the
// facts can boot it: the IP discovery table at VRAM end - 64 KiB (discovery_table.hpp), the PSP
// (psp_model.hpp), the SMU (smu_model.hpp), the IH ring (ih_ring.hpp) and the GFX status bits a
// boot polls. SCRATCH_REG6/7 are plain registers that outlive driver sessions (the gpu object);
// only a mode-1 reset clears them. A mode-1 reset (an SMU message, or mode1_reset()) stops every
// queue, puts every register back to its power-on value, keeps VRAM and rewrites the discovery
// table; for gpu_config::mode1_reset_latency after it the registers answer all ones and drop
// writes. What a real card needs from the driver it needs here too: doorbells reach an engine
// only through the S2A routes (doorbell_routes.hpp), the RLC autoload completes only with every
// firmware part loaded (rlc_autoload.hpp), GC 12's CP takes queues only once PFP and ME have a
// program counter, MP0 13.0.x refuses SETUP_TMR without its physical address (psp_model.hpp),
// and code rewritten at an address runs stale until an ACQUIRE_MEM invalidates GLI (gpu_core.hpp).
//
// The engines run either when a test steps them (step_until_idle, deterministic) or on a worker
// thread (start), which wakes on every doorbell store and register write made through this
// class, and otherwise polls the doorbell page, so stores made through a mapping of doorbell_fd()
// are seen as well.
//
//   tg::emu::gpu g({.gen = tg::memory::gfx_gen::gfx12});
//   tg::memory::page_table pt(g.gen(), va_base, va_size, pool, g.vram(), tlb);  // tables in its VRAM
//   g.write_register(g.chip().gc_reg.vm_pt_base_lo, std::uint32_t(pt.root_table().value | 1));
//   ...                                      // the rest of VM_CONTEXT0 and a queue, as a driver does
//   g.write_doorbell64(0x800, put);          // SDMA0's doorbell (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)
//   g.step_until_idle();
// tests/drivers/emu/emu_rig.hpp does all of it for the emulator's own tests: page tables, TLB
// flushes, both kinds of queue. The driver that boots it as a card, over the emulated PCI host
// or USB bridge (drivers/emu/machine), is tg's AM driver: drivers/amd/am_device.hpp.
//
// Thread-safe: every member takes the gpu's lock, except chip(), gen() and vram(), which is the
// BAR (host accesses to VRAM take no lock, as on hardware). A dispatch observer runs under that
// lock and must not call back into the gpu (usage_error).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <span>
#include <string>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "drivers/emu/gpu_core.hpp"
#include "drivers/emu/ih_ring.hpp"
#include "drivers/emu/psp_model.hpp"
#include "drivers/emu/queue_engine.hpp"
#include "drivers/emu/smu_model.hpp"

namespace tg::emu {

struct gpu_config {
  gfx_gen gen = gfx_gen::gfx11;
  std::string processor;  // the card (personality.hpp): "gfx1101"; empty: gen's first (gfx1100, gfx1200)
  std::uint64_t vram_bytes = 512ull << 20;       // the reference mock's 512 MiB (tinygrad's mock GPU (test/mockgpu/amd))
  std::uint64_t doorbell_bytes = 0x2000;         // BAR2 (tinygrad's mock GPU (test/mockgpu/amd))
  std::uint64_t mmio_bytes = 2ull << 20;         // BAR5; registers beyond it go through MM_INDEX / RSMU_INDEX
  std::chrono::microseconds busy_poll{50};       // worker: re-check waits this often
  std::chrono::microseconds idle_poll{1000};     // worker: look at the doorbell page this often
  // How long a mode-1 reset keeps the card off the bus: register reads answer 0xFFFFFFFF and
  // writes are lost meanwhile, as Linux expects (amdgpu_device_mode1_reset polls
  // RCC_CONFIG_MEMSIZE until it reads something else). 0: back at once.
  std::chrono::milliseconds mode1_reset_latency{0};
  // Host threads that interpret a dispatch's workgroups (shader/interpreter.hpp); 0: $TG_THREADS,
  // else one per hardware thread.
  unsigned shader_threads = 0;
};

struct run_summary {
  std::size_t packets = 0;  // executed by all queues
  bool waiting = false;     // some queue is blocked on a wait that may be satisfied later
};

class gpu {
 public:
  explicit gpu(const gpu_config& config);
  ~gpu();  // stops the worker
  gpu(const gpu&) = delete;
  gpu& operator=(const gpu&) = delete;

  const personality& chip() const { return core_->chip; }
  gfx_gen gen() const { return core_->chip.gen; }

  // ---- BAR0: VRAM. A memory::vram_access for the page tables; vram().fd() maps it again.
  emu::vram& vram() { return core_->memory; }

  // ---- BAR2: doorbells. A 64-bit store of a queue's put value at its doorbell offset.
  void write_doorbell64(std::uint64_t byte_offset, std::uint64_t value);
  std::uint64_t read_doorbell64(std::uint64_t byte_offset);
  int doorbell_fd() const { return core_->doorbells.fd(); }

  // ---- BAR5: MMIO. Dword registers by index, or by byte offset into the BAR.
  std::uint32_t read_register(std::uint32_t index);
  void write_register(std::uint32_t index, std::uint32_t value);
  std::uint32_t mmio_read32(std::uint64_t byte_offset);
  void mmio_write32(std::uint64_t byte_offset, std::uint32_t value);

  // ---- the system bus: where GMMU leaves with the SYSTEM bit lead (amdgpu_vm.h; tinygrad's mock GPU (test/mockgpu/amd)). Every
  // engine access through the MMU (SDMA copies, fills, writes, fences, polls; PM4 RELEASE_MEM,
  // WAIT_REG_MEM, IB and ring fetches; interpreted kernels' loads and stores) reaches it. Without
  // one, or when it throws, the access is a page fault recorded with its VA. nullptr detaches; the
  // bus must outlive its attachment and is called under the gpu's lock (see system_bus.hpp).
  void attach_system_bus(system_bus* bus);

  // ---- running
  run_summary step_until_idle();  // on this thread, until no queue can make progress
  void start();                   // the worker thread
  void stop();
  bool running() const;

  // ---- what happened
  std::vector<fault_record> faults() const;
  void clear_faults();
  std::vector<interrupt_record> interrupts() const;
  gpu_stats stats() const;
  // What the last interpreted dispatch did (drivers/emu/shader/interpreter.hpp).
  shader::dispatch_counters last_dispatch() const;
  // `observer` sees every interpreted dispatch once it ends (faulted ones too), with its launch
  // state and counters: for TG_DEBUG=2 and cost reports. It runs on the GPU's thread under its
  // lock, so it must not call the gpu. An empty function stops it.
  using dispatch_observer = std::function<void(const shader::launch&, const shader::dispatch_counters&)>;
  void observe_dispatches(dispatch_observer observer);
  tlb_stats tlb() const;
  // The compute queue of an HQD (GRBM_GFX_CNTL me/pipe/queue; the PM4 queue is me 1, pipe 0,
  // queue 0, tinygrad/runtime/support/am/ip.py; gfx_v11_0.c), and the SDMA queue; nullopt when not set up.
  std::optional<queue_status> compute_queue(std::uint32_t me = 1, std::uint32_t pipe = 0, std::uint32_t queue = 0) const;
  std::optional<queue_status> sdma_queue() const;

  // ---- the boot protocol: what the firmware blocks saw, and their fault injection.
  std::vector<psp_command> psp_log() const;
  psp_status psp() const;
  void set_psp_faults(const psp_faults& faults);
  std::vector<smu_message> smu_log() const;
  smu_status smu() const;
  void set_smu_silent(bool silent);  // the SMU never answers
  ih_stats ih() const;
  // A mode-1 reset as the SMU performs it; mode1_resets() counts them, whoever asked.
  void mode1_reset();
  std::uint64_t mode1_resets() const;
  // Where the discovery table lies: VRAM end - 64 KiB (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c).
  gpu_pa discovery_table_offset() const;

  // ---- fault injection, for tests of the driver's hang handling (not a hardware behaviour):
  // while an engine is frozen the queues never run it, as if that hardware queue hung; its
  // doorbells are kept in the doorbell page and taken once it thaws.
  void freeze_engine(engine_id engine, bool frozen);
  // A slow queue: the worker runs one packet of that engine per round and sleeps `delay`
  // between rounds (0 turns it off). step_until_idle is not slowed.
  void slow_engine(engine_id engine, std::chrono::microseconds delay);

 private:
  class lock;
  void install_register_behaviours();
  void install_boot_behaviours();  // gpu_boot.cpp: PSP, SMU, IH, GFX boot bits
  void install_cp_start();         // gpu_boot.cpp: GC 12's PFP / ME program counters
  void write_discovery_table();
  void settle();        // carries out a reset a register write requested
  void reset_locked();  // the mode-1 reset, under the lock
  void activate_hqd();
  void enable_sdma_ring(std::uint32_t rb_cntl);
  void invalidate_tlb(std::uint32_t req, std::uint32_t ack_index);
  std::uint32_t hqd_bank() const;  // of the HQD GRBM_GFX_CNTL selects
  static std::uint32_t hqd_bank_of(std::uint32_t me, std::uint32_t pipe, std::uint32_t queue) {
    return me << 8 | pipe << 4 | queue;
  }
  void record_setup_fault(engine_id engine, const std::string& message);
  run_summary run_queues(std::size_t max_packets);
  void worker();

  gpu_config config_;
  std::unique_ptr<gpu_core> core_;
  std::map<std::uint32_t, std::unique_ptr<queue_engine>> compute_;  // by HQD bank
  std::unique_ptr<queue_engine> sdma_;
  std::unique_ptr<psp_model> psp_;
  std::unique_ptr<smu_model> smu_;
  std::unique_ptr<ih_ring> ih_;
  std::uint64_t mode1_resets_ = 0;
  std::chrono::steady_clock::time_point back_from_reset_{};  // mode1_reset_latency after the last reset
  bool off_bus() const { return std::chrono::steady_clock::now() < back_from_reset_; }
  std::vector<std::unique_ptr<queue_engine>> retired_;  // replaced while a queue ran; freed after it
  bool mm_sem_held_ = false, gc_sem_held_ = false;
  bool compute_frozen_ = false, sdma_frozen_ = false;  // freeze_engine (fault injection)
  std::chrono::microseconds compute_delay_{0}, sdma_delay_{0};  // slow_engine (fault injection)
  bool slowed_this_round_ = false;
  bool in_window_ = false;  // inside an MM_DATA / RSMU_DATA access
  // GC 12: whether PFP / ME pipe 0 took a program counter (a reset pulse with one written), and
  // the CP_ME_CNTL value before the last write.
  bool pfp_started_ = false, me_started_ = false;
  std::uint32_t cp_me_cntl_before_ = 0;

  mutable std::mutex mutex_;
  std::atomic<std::thread::id> executing_thread_{};  // the thread running queues (and their observers)
  std::condition_variable wake_;
  bool kicked_ = false, stopping_ = false;
  std::thread worker_;
};

}  // namespace tg::emu
