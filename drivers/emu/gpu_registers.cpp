// gpu_registers.cpp: what the emulated registers do (tinygrad's mock GPU (test/mockgpu/amd), with the real hardware's rule
// where the reference's mock simplified): reset values, read-only status registers, the TLB
// invalidation engines, fault status, HDP flushes, the indirect register windows (MM_DATA also
// reaches VRAM when MM_INDEX bit 31 is set), and queues that start when the driver enables them.
#include <optional>

#include "drivers/emu/gpu.hpp"
#include "drivers/emu/pm4_engine.hpp"
#include "drivers/emu/sdma_engine.hpp"

namespace tg::emu {

namespace {

// Where BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL points after reset: MMIO_REG_HOLE_OFFSET (0x80000 -
// PAGE_SIZE, Linux 6.12 nbio_v4_3.c:475, nbif_v6_3_1.c:428) + KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL
// (0, uapi kfd_ioctl.h:728). The driver flushes HDP by writing 0 to register (value / 4) (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c).
constexpr std::uint32_t hdp_flush_remap_reset = 0x80000 - 4096;

// CP_HQD_DEQUEUE_REQUEST.DEQUEUE_REQ: 1 drain, 2 reset waves (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c); any request empties the HQD here.
constexpr std::uint32_t dequeue_req_mask = 0xF;
// The largest ring the emulator accepts, to keep pointer arithmetic far from overflow.
constexpr std::uint64_t max_ring_bytes = std::uint64_t{1} << 32;
// MM_INDEX bit 31: MM_DATA reaches VRAM instead of registers (Linux Documentation/PCI/sysfs-pci.rst).
constexpr std::uint32_t mm_index_vram = 0x80000000u;

// Sets a flag for the length of a scope.
struct window_guard {
  explicit window_guard(bool& flag) : flag_(flag) { flag_ = true; }
  ~window_guard() { flag_ = false; }
  bool& flag_;
};

}  // namespace

std::uint32_t gpu::hqd_bank() const {
  const register_fields& f = core_->chip.field;
  const std::uint32_t sel = core_->regs.peek(core_->chip.gc_reg.grbm_gfx_cntl);
  return hqd_bank_of(f.grbm_meid.get(sel), f.grbm_pipeid.get(sel), f.grbm_queueid.get(sel));
}

void gpu::record_setup_fault(engine_id engine, const std::string& message) {
  fault_record f{fault_kind::bad_queue_setup, engine};
  f.queue = engine == engine_id::compute ? hqd_bank() : 0;
  f.message = message;
  core_->faults.push_back(std::move(f));
}

void gpu::invalidate_tlb(std::uint32_t req, std::uint32_t ack_index) {
  const register_fields& f = core_->chip.field;
  const gc_registers& gc = core_->chip.gc_reg;
  const std::uint32_t vmids = f.inv_per_vmid_req.get(req);
  if (ack_index == gc.vm_inv_ack) {  // the MM hub's engine has no effect on the GC hub's TLB
    if (vmids & 1) core_->gmmu.invalidate();
    if (f.inv_clear_fault.get(req)) {
      core_->regs.poke(gc.vm_fault_status, 0);
      core_->regs.poke(gc.vm_fault_addr_lo, 0);
      core_->regs.poke(gc.vm_fault_addr_hi, 0);
    }
  }
  core_->regs.poke(ack_index, vmids);  // done at once: ACK shows the VMIDs requested (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)
  ++core_->stats.tlb_invalidate_requests;
}

void gpu::activate_hqd() {
  const gc_registers& r = core_->chip.gc_reg;
  const register_fields& f = core_->chip.field;
  register_file& regs = core_->regs;
  const std::uint32_t bank = hqd_bank();
  auto retire = [&] {
    auto it = compute_.find(bank);
    if (it == compute_.end()) return;
    retired_.push_back(std::move(it->second));
    compute_.erase(it);
  };
  retire();
  if (!f.hqd_active.get(regs.peek(r.hqd_active))) return;

  auto reg64 = [&](std::uint32_t lo, std::uint32_t hi) { return std::uint64_t{regs.peek(hi)} << 32 | regs.peek(lo); };
  auto fail = [&](const std::string& why) {
    record_setup_fault(engine_id::compute, str("CP_HQD_ACTIVE = 1 but ", why, "; the queue stays inactive"));
    regs.poke(r.hqd_active, 0);
  };
  const std::uint32_t doorbell = regs.peek(r.hqd_pq_doorbell_control);
  const std::uint64_t ring_bytes = std::uint64_t{4} << (f.hqd_queue_size.get(regs.peek(r.hqd_pq_control)) + 1);
  queue_engine::ring_config ring;
  ring.base = {reg64(r.hqd_pq_base, r.hqd_pq_base_hi) << 8};  // PQ_BASE holds VA >> 8 (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)
  ring.size_bytes = ring_bytes;
  ring.rptr = regs.peek(r.hqd_pq_rptr);
  ring.wptr = reg64(r.hqd_pq_wptr_lo, r.hqd_pq_wptr_hi);
  ring.doorbell_offset = std::uint64_t{f.hqd_doorbell_offset.get(doorbell)} * 4;  // a dword offset (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)
  if (std::uint64_t report = reg64(r.hqd_pq_rptr_report_addr, r.hqd_pq_rptr_report_addr_hi) & ~3ull)
    ring.rptr_writeback = gpu_va{report};
  if (std::uint64_t poll = reg64(r.hqd_pq_wptr_poll_addr, r.hqd_pq_wptr_poll_addr_hi) & ~7ull)
    ring.wptr_shadow = gpu_va{poll};

  if (core_->chip.gen == gfx_gen::gfx12 && (!pfp_started_ || !me_started_))
    return fail(str("GC 12's ", !pfp_started_ ? "PFP" : "ME", " pipe 0 never took a program counter (CP_",
                    !pfp_started_ ? "PFP" : "ME", "_PRGRM_CNTR_START, then a CP_ME_CNTL pipe reset pulse: gfx_v12_0.c: "
                    "gfx_v12_0_config_gfx_rs64), so the CP does not start"));
  if (!f.hqd_doorbell_en.get(doorbell)) return fail("CP_HQD_PQ_DOORBELL_CONTROL.DOORBELL_EN is 0 (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)");
  if (ring.doorbell_offset + 8 > core_->doorbells.size_bytes())
    return fail(str("the doorbell offset ", hex{ring.doorbell_offset}, " is outside the doorbell page"));
  if (ring_bytes > max_ring_bytes) return fail(str("CP_HQD_PQ_CONTROL.QUEUE_SIZE gives a ", ring_bytes, "-byte ring"));
  if (ring.base.value == 0) return fail("CP_HQD_PQ_BASE is 0");
  if (ring.wptr < ring.rptr) return fail("CP_HQD_PQ_WPTR is behind CP_HQD_PQ_RPTR");
  compute_[bank] = std::make_unique<pm4_engine>(*core_, bank, ring);
}

void gpu::enable_sdma_ring(std::uint32_t rb_cntl) {
  const sdma_registers& r = core_->chip.sdma_reg;
  const register_fields& f = core_->chip.field;
  register_file& regs = core_->regs;
  if (sdma_) retired_.push_back(std::move(sdma_));
  if (!f.rb_enable.get(rb_cntl)) return;

  auto reg64 = [&](std::uint32_t lo, std::uint32_t hi) { return std::uint64_t{regs.peek(hi)} << 32 | regs.peek(lo); };
  auto fail = [&](const std::string& why) {
    record_setup_fault(engine_id::sdma, str("SDMA0_QUEUE0_RB_CNTL.RB_ENABLE = 1 but ", why, "; the queue stays off"));
  };
  queue_engine::ring_config ring;
  ring.base = {reg64(r.rb_base, r.rb_base_hi) << 8};             // RB_BASE holds VA >> 8 (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c)
  ring.size_bytes = std::uint64_t{4} << f.rb_size.get(rb_cntl);  // rb_size = log2(ring bytes / 4)
  ring.rptr = reg64(r.rb_rptr, r.rb_rptr_hi);
  ring.wptr = reg64(r.rb_wptr, r.rb_wptr_hi);
  ring.doorbell_offset = std::uint64_t{f.sdma_doorbell_offset.get(regs.peek(r.doorbell_offset))} * 4;
  if (f.rb_rptr_writeback_enable.get(rb_cntl)) ring.rptr_writeback = gpu_va{reg64(r.rb_rptr_addr_lo, r.rb_rptr_addr_hi) & ~3ull};
  if (std::uint64_t poll = reg64(r.rb_wptr_poll_addr_lo, r.rb_wptr_poll_addr_hi) & ~3ull) ring.wptr_shadow = gpu_va{poll};

  if (!f.sdma_doorbell_enable.get(regs.peek(r.doorbell)))
    return fail("SDMA0_QUEUE0_DOORBELL.ENABLE is 0 (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c)");
  if (ring.doorbell_offset + 8 > core_->doorbells.size_bytes())
    return fail(str("the doorbell offset ", hex{ring.doorbell_offset}, " is outside the doorbell page"));
  if (ring.base.value == 0) return fail("RB_BASE is 0");
  if (ring.wptr < ring.rptr) return fail("RB_WPTR is behind RB_RPTR");
  sdma_ = std::make_unique<sdma_engine>(*core_, ring);
}

void gpu::install_register_behaviours() {
  register_file& regs = core_->regs;
  const personality& chip = core_->chip;
  const gc_registers& gc = chip.gc_reg;
  const mmhub_registers& mm = chip.mm_reg;
  const nbio_registers& nb = chip.nbio_reg;
  const register_fields& f = chip.field;
  auto read_only = [&](std::uint32_t index, std::uint32_t value) {
    regs.poke(index, value);
    regs.set_behaviour(index, {.read_only = true});
  };

  // NBIO: memory size, HDP flushes, the indirect windows for registers beyond the BAR.
  read_only(nb.config_memsize, std::uint32_t(config_.vram_bytes >> 20));  // MiB (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)
  auto count_hdp_flush = [this](std::uint32_t) { ++core_->stats.hdp_flushes; };
  regs.poke(nb.remap_hdp_mem_flush_cntl, hdp_flush_remap_reset);
  regs.set_behaviour(hdp_flush_remap_reset / 4, {.on_write = count_hdp_flush});
  regs.set_behaviour(nb.remap_hdp_mem_flush_cntl, {.on_write = [this, count_hdp_flush](std::uint32_t v) {
                       // Never over a register that already does something.
                       if (!core_->regs.has_behaviour(v / 4)) core_->regs.set_behaviour(v / 4, {.on_write = count_hdp_flush});
                     }});
  // The GPU-side HDP flush of WAIT_REG_MEM (gfx_v11_0.c: gfx_v11_0_ring_emit_hdp_flush): REQ is answered on DONE at once.
  regs.set_behaviour(nb.hdp_flush_req, {.on_write = [this, done = nb.hdp_flush_done](std::uint32_t v) {
                       core_->regs.poke(done, v);
                       ++core_->stats.hdp_flushes;
                     }});
  regs.set_behaviour(nb.hdp_flush_done, {.read_only = true});
  // A window that points at a window (itself or the other) acts on its own stored value, so no
  // chain of indirections can recurse. MM_INDEX bit 31 turns MM_DATA onto VRAM instead
  // (Linux amdgpu_device_mm_access): address bits 30:0 from MM_INDEX, the bits above from
  // MM_INDEX_HI; a dword outside VRAM reads 0 and drops writes.
  auto window = [this](std::uint32_t data, auto target, auto vram_at) {
    core_->regs.set_behaviour(data, {.on_read = [this, target, vram_at](std::uint32_t stored) {
                                       if (const std::optional<gpu_pa> at = vram_at())
                                         return core_->memory.contains(*at, 4) ? core_->memory.load32(*at) : 0u;
                                       if (in_window_) return stored;
                                       in_window_ = true;
                                       const std::uint32_t v = core_->regs.read(target());
                                       in_window_ = false;
                                       return v;
                                     },
                                     .on_write = [this, target, vram_at](std::uint32_t v) {
                                       if (const std::optional<gpu_pa> at = vram_at()) {
                                         if (core_->memory.contains(*at, 4)) core_->memory.store32(*at, v);
                                         return;
                                       }
                                       if (in_window_) return;
                                       in_window_ = true;
                                       core_->regs.write(target(), v);
                                       in_window_ = false;
                                     }});
  };
  auto no_vram = [] { return std::optional<gpu_pa>{}; };
  window(
      nb.mm_data,
      [this, nb] {  // MM_INDEX(_HI) hold a register's byte address
        return std::uint32_t((std::uint64_t{core_->regs.peek(nb.mm_index_hi)} << 32 | core_->regs.peek(nb.mm_index)) / 4);
      },
      [this, nb]() -> std::optional<gpu_pa> {
        const std::uint32_t index = core_->regs.peek(nb.mm_index);
        if ((index & mm_index_vram) == 0) return std::nullopt;
        return gpu_pa{(std::uint64_t{core_->regs.peek(nb.mm_index_hi)} << 31 | (index & ~mm_index_vram)) & ~3ull};
      });
  window(nb.rsmu_data, [this, nb] { return core_->regs.peek(nb.rsmu_index) / 4; }, no_vram);  // tinygrad/runtime/support/am/ip.py; gfx_v11_0.c

  // GC status registers: CP idle (tinygrad's mock GPU, test/mockgpu/amd), the RLC bootload not done until the PSP autoloads.
  read_only(gc.cp_stat, 0);
  read_only(gc.rlc_bootload_status, 0);  // the PSP's AUTOLOAD_RLC completes it (psp_model.hpp)
  regs.set_behaviour(gc.rlc_safe_mode, {.on_read = [cmd = f.rlc_safe_mode_cmd](std::uint32_t stored) {
                       return cmd.set(stored, 0);  // the RLC takes the command at once
                     }});

  // The framebuffer at MC address 0; TOP is inclusive, as Linux reads it (gfxhub_v3_0_get_fb_location).
  const std::uint32_t fb_top = std::uint32_t((config_.vram_bytes - 1) >> 24);
  for (auto [base, top] : {std::pair{gc.fb_location_base, gc.fb_location_top}, {mm.fb_location_base, mm.fb_location_top}}) {
    read_only(base, 0);
    read_only(top, fb_top);
  }

  // TLB invalidation engine 17 of both hubs (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c): a semaphore taken by reading 1 and
  // released by writing 0; REQ invalidates (the GC hub's TLB for VMID 0) and ACK shows it done.
  for (auto [req, ack, sem, held] : {std::tuple{gc.vm_inv_req, gc.vm_inv_ack, gc.vm_inv_sem, &gc_sem_held_},
                                     std::tuple{mm.inv_req, mm.inv_ack, mm.inv_sem, &mm_sem_held_}}) {
    regs.set_behaviour(req, {.on_write = [this, ack = ack](std::uint32_t v) { invalidate_tlb(v, ack); }});
    regs.set_behaviour(ack, {.read_only = true});
    regs.set_behaviour(sem, {.on_read = [held = held](std::uint32_t) -> std::uint32_t {
                               if (*held) return 0;
                               *held = true;
                               return 1;
                             },
                             .on_write = [held = held](std::uint32_t v) {
                               if ((v & 1) == 0) *held = false;
                             }});
  }

  // Protection faults: hardware-latched status and address, cleared through FAULT_CNTL (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
  read_only(gc.vm_fault_status, 0);
  read_only(gc.vm_fault_addr_lo, 0);
  read_only(gc.vm_fault_addr_hi, 0);
  regs.set_behaviour(gc.vm_fault_cntl, {.on_write = [this, gc, clear = f.fault_cntl_clear](std::uint32_t v) {
                       if (!clear.get(v)) return;
                       core_->regs.poke(gc.vm_fault_status, 0);
                       core_->regs.poke(gc.vm_fault_addr_lo, 0);
                       core_->regs.poke(gc.vm_fault_addr_hi, 0);
                       core_->regs.poke(gc.vm_fault_cntl, clear.set(v, 0));  // the clear is a pulse
                     }});

  // Compute queues: the HQD register block is banked by GRBM_GFX_CNTL (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
  regs.set_banked_range(gc.hqd_first, gc.hqd_last, [this] { return hqd_bank(); });
  regs.set_behaviour(gc.hqd_active, {.on_write = [this](std::uint32_t) { activate_hqd(); }});
  regs.set_behaviour(gc.hqd_dequeue_request, {.on_write = [this, gc](std::uint32_t v) {
                       if ((v & dequeue_req_mask) == 0) return;
                       core_->regs.poke(gc.hqd_active, 0);
                       activate_hqd();  // retires the queue
                       core_->regs.poke(gc.hqd_dequeue_request, 0);
                     }});

  // SDMA0 queue 0 starts and stops with RB_CNTL.RB_ENABLE (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c).
  regs.set_behaviour(chip.sdma_reg.rb_cntl, {.on_write = [this](std::uint32_t v) { enable_sdma_ring(v); }});

  install_boot_behaviours();
}

}  // namespace tg::emu
