// emu_rig.hpp: a small test driver for the emulated GPU: real page tables in its VRAM, the TLB
// flush of tinygrad/runtime/support/am/ip.py: AM_GMC.flush_tlb through MMIO, and compute and SDMA rings set up
// and fed through registers and doorbells as AM_GFX/AM_SDMA.setup_ring and ops_amd.py's queues do. Test-only:
// the runtime's own ring code lives in runtime/queue.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "drivers/emu/gpu.hpp"
#include "runtime/memory/page_table.hpp"
#include "runtime/memory/va_allocator.hpp"
#include "runtime/memory/vram_allocator.hpp"
#include "runtime/queue/cmd_buffer.hpp"

namespace tg::emu::test {

inline constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;
inline constexpr gpu_va va_base{std::uint64_t{1} << 45};  // the reference's window (AMMemoryManager.va_allocator)
inline constexpr std::uint64_t va_size = std::uint64_t{1} << 44;

// n seeded random bytes, for copies checked bit for bit.
inline std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = std::byte(rng());
  return v;
}

// TEST_CASE_TEMPLATE parameters: every test that can runs on both personalities.
struct gfx11 {
  static constexpr gfx_gen gen = gfx_gen::gfx11;
};
struct gfx12 {
  static constexpr gfx_gen gen = gfx_gen::gfx12;
};

// The hub TLB flush of tinygrad's AM_GMC.flush_tlb: HDP flush, MM hub (semaphore, request, ack, release), GC hub.
class hub_flush final : public memory::tlb_invalidator {
 public:
  explicit hub_flush(gpu& g) : g_(g) {}

  void invalidate_tlb(gpu_va, std::uint64_t) override {
    if (enabled) flush();
  }
  void flush() {
    const personality& c = g_.chip();
    g_.write_register(g_.read_register(c.nbio_reg.remap_hdp_mem_flush_cntl) / 4, 0);
    poll(c.mm_reg.inv_sem, 1);
    g_.write_register(c.mm_reg.inv_req, req_vmid0);
    poll(c.mm_reg.inv_ack, 1);
    g_.write_register(c.mm_reg.inv_sem, 0);
    g_.write_register(c.gc_reg.vm_inv_req, req_vmid0);
    poll(c.gc_reg.vm_inv_ack, 1);
    ++flushes;
  }

  bool enabled = true;  // false: the page tables change without a flush (a driver bug to catch)
  std::size_t flushes = 0;

 private:
  static constexpr std::uint32_t req_vmid0 = 0x00F80001;  // VMID 0, flush type 0, every L1/L2 PTE/PDE level
  void poll(std::uint32_t reg, std::uint32_t bit) {
    for (int i = 0; i < 100; ++i)
      if (g_.read_register(reg) & bit) return;
    throw device_error(str("hub_flush: register ", tg::hex{reg}, " never showed bit ", bit));
  }
  gpu& g_;
};

struct buffer {
  gpu_va va;
  gpu_pa pa;
  std::uint64_t bytes = 0;
};

class emu_rig {
 public:
  // shader_threads: the host threads that interpret dispatches (gpu_config; 0: the default).
  explicit emu_rig(gfx_gen gen, std::uint64_t vram_bytes = 128 * MiB, unsigned shader_threads = 0)
      : g({.gen = gen, .vram_bytes = vram_bytes, .shader_threads = shader_threads}), tables(gpu_pa{0}, tables_bytes),
        data(gpu_pa{tables_bytes}, vram_bytes - tables_bytes), vas(va_base, va_size), flush(g),
        pt(gen, va_base, va_size, tables, g.vram(), flush) {
    program_vm();
    program_doorbell_routes();
    start_gfx_pipes();
  }

  // GC 12: PFP and ME pipe 0 at a program counter, each with a reset pulse, as gfx_v12_0.c:
  // gfx_v12_0_config_gfx_rs64 does; the CP takes no queue before.
  void start_gfx_pipes() {
    if (g.gen() != gfx_gen::gfx12) return;
    const gc_registers& r = g.chip().gc_reg;
    const register_fields& f = g.chip().field;
    g.write_register(r.cp_pfp_start, 0x3000 >> 2);
    g.write_register(r.cp_me_cntl, f.pfp_pipe0_reset.set(0, 1));
    g.write_register(r.cp_me_cntl, 0);
    g.write_register(r.cp_me_start, 0x3400 >> 2);
    g.write_register(r.cp_me_cntl, f.me_pipe0_reset.set(0, 1));
    g.write_register(r.cp_me_cntl, 0);
  }

  // The S2A doorbell routes as Linux programs them (nbio_v4_3.c / nbif_v6_3_1.c: *_gc_doorbell_init
  // for the CP, *_sdma_doorbell_range for SDMA0: AWID 0xE, doorbell dwords 0x200 .. 0x213, AWADDR 3).
  static constexpr std::uint32_t gc_route0 = 0x30000007, gc_route3 = 0x3000000D,
                                 sdma_route = 1 | 0xE << 1 | 0x200 << 7 | 20 << 17 | 3u << 28;
  void program_doorbell_routes() {
    const nbio_registers& nb = g.chip().nbio_reg;
    g.write_register(nb.s2a_entry[0], gc_route0);
    g.write_register(nb.s2a_entry[3], gc_route3);
    g.write_register(nb.s2a_entry[2], sdma_route);
  }

  // VM_CONTEXT0 as the driver programs it (tinygrad's AM_GMC.enable_vm_addressing).
  void program_vm() {
    const gc_registers& r = g.chip().gc_reg;
    const std::uint64_t base = pt.root_table().value | 1, start = va_base.value >> 12,
                        end = (va_base.value + va_size - 1) >> 12;
    g.write_register(r.vm_pt_base_lo, std::uint32_t(base));
    g.write_register(r.vm_pt_base_hi, std::uint32_t(base >> 32));
    g.write_register(r.vm_pt_start_lo, std::uint32_t(start));
    g.write_register(r.vm_pt_start_hi, std::uint32_t(start >> 32));
    g.write_register(r.vm_pt_end_lo, std::uint32_t(end));
    g.write_register(r.vm_pt_end_hi, std::uint32_t(end >> 32));
    flush.flush();
  }

  // Physically contiguous VRAM mapped at a fresh VA; 2 MiB-aligned (so 2 MiB leaves) from 2 MiB up.
  buffer alloc(std::uint64_t bytes) {
    bytes = (bytes + 4095) / 4096 * 4096;
    const std::uint64_t align = bytes >= 2 * MiB ? 2 * MiB : 4 * KiB;
    buffer b{vas.allocate(bytes), data.allocate(bytes, align), bytes};
    pt.map(b.va, memory::phys_chunk{b.pa, bytes}, {});
    return b;
  }

  void write(const buffer& b, std::uint64_t offset, std::span<const std::byte> bytes) {
    g.vram().write(b.pa + offset, bytes);
  }
  std::vector<std::byte> read(const buffer& b, std::uint64_t offset, std::uint64_t bytes) {
    std::vector<std::byte> out(bytes);
    g.vram().read(b.pa + offset, out);
    return out;
  }
  std::uint32_t load32(const buffer& b, std::uint64_t offset) { return g.vram().load32(b.pa + offset); }
  std::uint64_t load64(const buffer& b, std::uint64_t offset) { return g.vram().load64(b.pa + offset); }
  void store32(const buffer& b, std::uint64_t offset, std::uint32_t v) { g.vram().store32(b.pa + offset, v); }
  void store64(const buffer& b, std::uint64_t offset, std::uint64_t v) { g.vram().store64(b.pa + offset, v); }

  gpu g;
  static constexpr std::uint64_t tables_bytes = 8 * MiB;
  memory::vram_allocator tables, data;
  memory::va_allocator vas;
  hub_flush flush;
  memory::page_table pt;
};

// Put values, the write-pointer shadow and the doorbell (AMDQueueDesc.signal_doorbell): shared by both queue kinds.
class ring_writer {
 public:
  buffer ring, gart;  // the ring, and the page holding the read-pointer write-back and wptr shadow

  ring_writer(emu_rig& rig, std::uint64_t ring_bytes, unsigned unit_bytes, std::uint64_t doorbell, std::uint64_t shadow)
      : ring(rig.alloc(ring_bytes)), gart(rig.alloc(4096)), rig_(rig), ring_bytes_(ring_bytes), unit_(unit_bytes),
        doorbell_(doorbell), shadow_(shadow) {
    std::vector<std::byte> zeros(ring_bytes);
    rig.write(ring, 0, zeros);
    rig.write(gart, 0, std::vector<std::byte>(4096));
  }

  // Copies the dwords at put (wrapping at the ring end) without publishing them.
  void copy_in(std::span<const std::uint32_t> words) {
    for (std::uint32_t w : words) {
      rig_.store32(ring, (put_ * unit_) % ring_bytes_, w);
      put_ += 4 / unit_;
    }
  }
  void publish() {
    rig_.store64(gart, shadow_, put_);
    rig_.g.write_doorbell64(doorbell_, put_);
  }
  void submit(std::span<const std::uint32_t> words) {
    copy_in(words);
    publish();
  }
  std::uint64_t put() const { return put_; }
  std::uint64_t ring_bytes() const { return ring_bytes_; }

 protected:
  emu_rig& rig_;
  std::uint64_t ring_bytes_;
  unsigned unit_;
  std::uint64_t doorbell_, shadow_;
  std::uint64_t put_ = 0;  // in the queue's unit
};

// The PM4 queue of MEC1 pipe 0 queue 0 (tinygrad's AM_GFX.setup_ring): doorbell 0x18, rptr at gart + 128, wptr
// shadow at gart + 56, pointers in dwords.
class pm4_ring : public ring_writer {
 public:
  static constexpr std::uint64_t doorbell = 0x18, rptr_at = 128, wptr_at = 56;

  pm4_ring(emu_rig& rig, std::uint64_t ring_bytes) : ring_writer(rig, ring_bytes, 4, doorbell, wptr_at) {
    gpu& g = rig.g;
    const gc_registers& r = g.chip().gc_reg;
    const queue::reg_table& t = *g.chip().gc_table;
    g.write_register(r.grbm_gfx_cntl, t.encode("regGRBM_GFX_CNTL", {{"MEID", 1}}));
    g.write_register(r.hqd_pq_base, std::uint32_t(ring.va.value >> 8));
    g.write_register(r.hqd_pq_base_hi, std::uint32_t(ring.va.value >> 40));
    g.write_register(r.hqd_pq_rptr_report_addr, std::uint32_t(gart.va.value + rptr_at));
    g.write_register(r.hqd_pq_rptr_report_addr_hi, std::uint32_t((gart.va.value + rptr_at) >> 32));
    g.write_register(r.hqd_pq_wptr_poll_addr, std::uint32_t(gart.va.value + wptr_at));
    g.write_register(r.hqd_pq_wptr_poll_addr_hi, std::uint32_t((gart.va.value + wptr_at) >> 32));
    g.write_register(r.hqd_pq_doorbell_control,
                     t.encode("regCP_HQD_PQ_DOORBELL_CONTROL", {{"DOORBELL_OFFSET", doorbell / 4}, {"DOORBELL_EN", 1}}));
    const std::uint32_t queue_size = std::uint32_t(std::countr_zero(ring_bytes / 4)) - 1;
    g.write_register(r.hqd_pq_control,
                     t.encode("regCP_HQD_PQ_CONTROL", {{"QUEUE_SIZE", queue_size}, {"RPTR_BLOCK_SIZE", 5}}));
    g.write_register(r.hqd_pq_rptr, 0);
    g.write_register(r.hqd_pq_wptr_lo, 0);
    g.write_register(r.hqd_pq_wptr_hi, 0);
    g.write_register(r.hqd_active, 1);
    g.write_register(r.grbm_gfx_cntl, 0);
  }

  std::uint64_t rptr() { return rig_.load64(gart, rptr_at); }  // the CP's write-back, dwords
};

// SDMA0 queue 0 (tinygrad's AM_SDMA.setup_ring): doorbell 0x800, rptr write-back at gart + 0, wptr shadow at gart + 8,
// pointers in bytes. submit() keeps each batch contiguous, padding the tail with NOPs (as AMDCopyQueue._submit).
class sdma_ring : public ring_writer {
 public:
  static constexpr std::uint64_t doorbell = 0x800, rptr_at = 0, wptr_at = 8;

  sdma_ring(emu_rig& rig, std::uint64_t ring_bytes) : ring_writer(rig, ring_bytes, 1, doorbell, wptr_at) {
    gpu& g = rig.g;
    const sdma_registers& r = g.chip().sdma_reg;
    const queue::reg_table& t = *g.chip().gc_table;
    const bool gfx12 = g.gen() == gfx_gen::gfx12;
    g.write_register(r.minor_ptr_update, 1);
    for (std::uint32_t reg : {r.rb_rptr, r.rb_rptr_hi, r.rb_wptr, r.rb_wptr_hi}) g.write_register(reg, 0);
    g.write_register(r.rb_base, std::uint32_t(ring.va.value >> 8));
    g.write_register(r.rb_base_hi, std::uint32_t(ring.va.value >> 40));
    g.write_register(r.rb_rptr_addr_lo, std::uint32_t(gart.va.value + rptr_at));
    g.write_register(r.rb_rptr_addr_hi, std::uint32_t((gart.va.value + rptr_at) >> 32));
    g.write_register(r.rb_wptr_poll_addr_lo, std::uint32_t(gart.va.value + wptr_at));
    g.write_register(r.rb_wptr_poll_addr_hi, std::uint32_t((gart.va.value + wptr_at) >> 32));
    g.write_register(r.doorbell_offset, t.encode("regSDMA0_QUEUE0_DOORBELL_OFFSET", {{"OFFSET", doorbell / 4}}));
    g.write_register(r.doorbell, t.encode("regSDMA0_QUEUE0_DOORBELL", {{"ENABLE", 1}}));
    g.write_register(r.minor_ptr_update, 0);
    const std::uint32_t rb_size = std::uint32_t(std::countr_zero(ring_bytes / 4));
    g.write_register(r.rb_cntl, t.encode("regSDMA0_QUEUE0_RB_CNTL",
                                         {{"RB_SIZE", rb_size},
                                          {gfx12 ? "MCU_WPTR_POLL_ENABLE" : "F32_WPTR_POLL_ENABLE", 1},
                                          {"RPTR_WRITEBACK_ENABLE", 1},
                                          {"RPTR_WRITEBACK_TIMER", 4},
                                          {"RB_PRIV", 1},
                                          {"RB_ENABLE", 1}}));
  }

  void submit(std::span<const std::uint32_t> words) {
    const std::uint64_t tail = ring_bytes_ - put_ % ring_bytes_;
    if (4 * words.size() > tail) copy_in(std::vector<std::uint32_t>(tail / 4, 0));  // NOPs to the end
    ring_writer::submit(words);
  }
  std::uint64_t rptr() { return rig_.load64(gart, rptr_at); }  // the engine's write-back, bytes
};

}  // namespace tg::emu::test
