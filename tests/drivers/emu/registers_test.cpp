// registers_test.cpp: the emulated MMIO register file: indices from the generated tables against
// the asic_reg offset headers with the navi bases, and the behaviours the driver relies on (test/mockgpu/am/amgpu.py),
// including the MM_INDEX / MM_DATA window onto registers and, with bit 31, onto VRAM (amdgpu_device_mm_access).
#include <doctest/doctest.h>

#include "tests/drivers/emu/emu_rig.hpp"

using namespace tg::emu;
using namespace tg::emu::test;

TEST_CASE("register indices agree with the offset headers and the navi bases") {
  const personality& g11 = personality_of(gfx_gen::gfx11);
  const personality& g12 = personality_of(gfx_gen::gfx12);
  CHECK(g11.target == "gfx1100");
  CHECK(g12.target == "gfx1200");
  // A.2
  CHECK(g11.gc_reg.hqd_active == 0x320B);
  CHECK(g12.gc_reg.hqd_active == 0x320B);
  CHECK(g11.gc_reg.hqd_first == 0x3209);
  CHECK(g11.gc_reg.hqd_last == 0x3240);
  CHECK(g11.gc_reg.hqd_pq_doorbell_control == 0x3218);
  CHECK(g11.gc_reg.grbm_gfx_cntl == 0xA900);
  CHECK(g11.gc_reg.vm_inv_req == 0x291C);
  CHECK(g11.gc_reg.vm_inv_ack == 0x292E);
  CHECK(g12.gc_reg.vm_inv_req == 0x28B8);
  CHECK(g12.gc_reg.vm_inv_ack == 0x28CA);
  CHECK(g11.gc_reg.vm_pt_base_lo == 0x2953);
  CHECK(g12.gc_reg.vm_pt_base_lo == 0x28EF);
  CHECK(g11.gc_reg.vm_fault_status == 0x2828);
  CHECK(g12.gc_reg.vm_fault_status == 0x2830);
  CHECK(g11.gc_reg.vm_fault_addr_lo == 0x2829);
  CHECK(g12.gc_reg.vm_fault_addr_lo == 0x2832);
  CHECK(g11.gc_reg.fb_location_base == 0x28D8);
  CHECK(g12.gc_reg.fb_location_base == 0x2874);
  CHECK(g11.gc_reg.rlc_bootload_status == 0xEE82);
  CHECK(g12.gc_reg.rlc_bootload_status == 0xEE7C);
  // A.3
  CHECK(g11.sdma_reg.rb_cntl == 0x12E0);
  CHECK(g11.sdma_reg.rb_rptr_addr_lo == 0x12E9);
  CHECK(g12.sdma_reg.rb_rptr_addr_lo == 0x12E7);
  CHECK(g11.sdma_reg.doorbell_offset == 0x130B);
  CHECK(g12.sdma_reg.doorbell_offset == 0x12F1);
  CHECK(g11.sdma_reg.rb_wptr_poll_addr_lo == 0x1313);
  CHECK(g12.sdma_reg.rb_wptr_poll_addr_lo == 0x12F8);
  // A.4
  CHECK(g11.mm_reg.inv_sem == 0x1A762);
  CHECK(g11.mm_reg.inv_req == 0x1A774);
  CHECK(g12.mm_reg.inv_ack == 0x1A5AA);
  CHECK(g12.mm_reg.fb_location_top == 0x1A555);
  // A.5
  CHECK(g11.nbio_reg.hdp_flush_done == 0xE27);
  CHECK(g11.nbio_reg.rsmu_data == 0x15);
}

TEST_CASE_TEMPLATE("RCC_CONFIG_MEMSIZE and FB_LOCATION describe the VRAM and ignore writes", G, gfx11, gfx12) {
  gpu g({.gen = G::gen, .vram_bytes = 256 * MiB});
  const personality& c = g.chip();
  CHECK(g.read_register(c.nbio_reg.config_memsize) == 256);  // MiB (tinygrad's AMDev._run_discovery)
  g.write_register(c.nbio_reg.config_memsize, 1);
  CHECK(g.read_register(c.nbio_reg.config_memsize) == 256);
  CHECK(g.read_register(c.gc_reg.fb_location_base) == 0);
  CHECK(g.read_register(c.gc_reg.fb_location_top) == ((256 * MiB - 1) >> 24));
  CHECK(g.read_register(c.mm_reg.fb_location_top) == ((256 * MiB - 1) >> 24));
}

TEST_CASE_TEMPLATE("status registers at power-on: CP idle, the RLC bootload not done before the PSP autoloads", G,
                   gfx11, gfx12) {
  gpu g({.gen = G::gen, .vram_bytes = 16 * MiB});
  const personality& c = g.chip();
  CHECK(g.read_register(c.gc_reg.cp_stat) == 0);
  CHECK(c.field.bootload_complete.get(g.read_register(c.gc_reg.rlc_bootload_status)) == 0);  // psp_test.cpp completes it
  g.write_register(c.gc_reg.rlc_safe_mode, 0x3);  // message 1, CMD (tinygrad's AM_GFX.set_clockgating_state)
  CHECK(g.read_register(c.gc_reg.rlc_safe_mode) == 0x2);  // CMD taken at once
}

TEST_CASE_TEMPLATE("invalidation engine 17: semaphore by read, request, acknowledge", G, gfx11, gfx12) {
  gpu g({.gen = G::gen, .vram_bytes = 16 * MiB});
  const personality& c = g.chip();
  CHECK(g.read_register(c.mm_reg.inv_sem) == 1);  // taken
  CHECK(g.read_register(c.mm_reg.inv_sem) == 0);  // busy until released
  g.write_register(c.mm_reg.inv_sem, 0);
  CHECK(g.read_register(c.mm_reg.inv_sem) == 1);

  CHECK(g.read_register(c.gc_reg.vm_inv_ack) == 0);
  g.write_register(c.gc_reg.vm_inv_req, 0x00F80001);  // tinygrad's AM_GMC.flush_tlb
  CHECK(g.read_register(c.gc_reg.vm_inv_ack) == 1);
  g.write_register(c.mm_reg.inv_req, 0x00F80004);
  CHECK(g.read_register(c.mm_reg.inv_ack) == 4);
  g.write_register(c.gc_reg.vm_inv_ack, 0);  // read-only
  CHECK(g.read_register(c.gc_reg.vm_inv_ack) == 1);
  CHECK(g.tlb().invalidations == 1);  // only the GC hub's VMID-0 request reaches the GC TLB
  CHECK(g.stats().tlb_invalidate_requests == 2);
}

TEST_CASE_TEMPLATE("HDP flushes: the remapped flush register and the REQ/DONE pair", G, gfx11, gfx12) {
  gpu g({.gen = G::gen, .vram_bytes = 16 * MiB});
  const nbio_registers& nb = g.chip().nbio_reg;
  const std::uint32_t remap = g.read_register(nb.remap_hdp_mem_flush_cntl);
  CHECK(remap == 0x7F000);
  g.write_register(remap / 4, 0);  // tinygrad's AM_GMC.flush_hdp
  CHECK(g.stats().hdp_flushes == 1);
  g.write_register(nb.hdp_flush_req, 0x8);
  CHECK(g.read_register(nb.hdp_flush_done) == 0x8);
  CHECK(g.stats().hdp_flushes == 2);
}

TEST_CASE_TEMPLATE("registers beyond the BAR are reached through MM_INDEX/MM_DATA and RSMU_INDEX/DATA", G, gfx11, gfx12) {
  gpu g({.gen = G::gen, .vram_bytes = 64 * MiB});
  const nbio_registers& nb = g.chip().nbio_reg;
  const std::uint32_t far = 0x507A40;  // the gfx11 S2A doorbell entry (tinygrad's AM_SOC.doorbell_enable)
  g.write_register(nb.rsmu_index, far * 4);
  g.write_register(nb.rsmu_data, 0x1234);
  CHECK(g.read_register(far) == 0x1234);
  g.write_register(nb.mm_index, nb.config_memsize * 4);
  g.write_register(nb.mm_index_hi, 0);
  CHECK(g.read_register(nb.mm_data) == 64);
  CHECK(g.mmio_read32(4 * nb.config_memsize) == 64);
  CHECK_THROWS_AS(g.mmio_read32(4 * far), tg::usage_error);

  // Windows pointing at each other end at the stored value instead of recursing.
  g.write_register(nb.mm_index, nb.rsmu_data * 4);
  g.write_register(nb.rsmu_index, nb.mm_data * 4);
  (void)g.read_register(nb.mm_data);
  g.write_register(nb.mm_data, 5);
  CHECK_THROWS_AS(g.mmio_write32(2, 0), tg::usage_error);
}

TEST_CASE_TEMPLATE("MM_DATA reaches VRAM when MM_INDEX bit 31 is set, with MM_INDEX_HI = address >> 31", G, gfx11, gfx12) {
  gpu g({.gen = G::gen, .vram_bytes = 4096 * MiB});  // above 2 GiB, so MM_INDEX_HI matters
  const nbio_registers& nb = g.chip().nbio_reg;
  // Through the window the way Linux amdgpu_device_mm_access goes.
  auto at = [&](std::uint64_t address) {
    g.write_register(nb.mm_index, std::uint32_t(address & 0x7FFFFFFF) | 0x80000000u);
    g.write_register(nb.mm_index_hi, std::uint32_t(address >> 31));
  };
  const std::uint64_t low = 0x1000, high = 0xC000'0010ull;  // high: MM_INDEX_HI = 1
  at(low);
  g.write_register(nb.mm_data, 0xCAFEF00D);
  at(high);
  g.write_register(nb.mm_data, 0x12345678);
  std::uint32_t seen = 0;
  g.vram().read(gpu_pa{low}, std::as_writable_bytes(std::span(&seen, 1)));
  CHECK(seen == 0xCAFEF00D);
  g.vram().read(gpu_pa{high}, std::as_writable_bytes(std::span(&seen, 1)));
  CHECK(seen == 0x12345678);
  const std::uint32_t put = 0xA5A5'5A5A;
  g.vram().write(gpu_pa{high + 4}, std::as_bytes(std::span(&put, 1)));
  at(high + 4);
  CHECK(g.read_register(nb.mm_data) == put);
  CHECK(g.read_register(nb.config_memsize) == 4096);  // the registers behind the window are untouched
  at(8192ull * MiB);  // beyond VRAM: reads 0, writes go nowhere
  CHECK(g.read_register(nb.mm_data) == 0);
  g.write_register(nb.mm_data, 1);
  // Bit 31 clear: the register window as before.
  g.write_register(nb.mm_index, nb.config_memsize * 4);
  g.write_register(nb.mm_index_hi, 0);
  CHECK(g.read_register(nb.mm_data) == 4096);
}

TEST_CASE_TEMPLATE("the HQD registers are banked by GRBM_GFX_CNTL", G, gfx11, gfx12) {
  gpu g({.gen = G::gen, .vram_bytes = 16 * MiB});
  const personality& c = g.chip();
  const auto& t = *c.gc_table;
  g.write_register(c.gc_reg.grbm_gfx_cntl, t.encode("regGRBM_GFX_CNTL", {{"MEID", 1}, {"QUEUEID", 0}}));
  g.write_register(c.gc_reg.hqd_pq_base, 0x1111);
  g.write_register(c.gc_reg.grbm_gfx_cntl, t.encode("regGRBM_GFX_CNTL", {{"MEID", 1}, {"QUEUEID", 1}}));
  CHECK(g.read_register(c.gc_reg.hqd_pq_base) == 0);
  g.write_register(c.gc_reg.hqd_pq_base, 0x2222);
  g.write_register(c.gc_reg.grbm_gfx_cntl, t.encode("regGRBM_GFX_CNTL", {{"MEID", 1}, {"QUEUEID", 0}}));
  CHECK(g.read_register(c.gc_reg.hqd_pq_base) == 0x1111);
  CHECK(g.read_register(c.gc_reg.compute_pgm_lo) == 0);  // outside the block: not banked
}

TEST_CASE_TEMPLATE("a dequeue request empties the HQD", G, gfx11, gfx12) {
  emu_rig rig(G::gen, 64 * MiB);
  pm4_ring q(rig, 4 * KiB);
  const personality& c = rig.g.chip();
  REQUIRE(rig.g.compute_queue());
  rig.g.write_register(c.gc_reg.grbm_gfx_cntl, c.gc_table->encode("regGRBM_GFX_CNTL", {{"MEID", 1}}));
  CHECK(rig.g.read_register(c.gc_reg.hqd_active) == 1);
  rig.g.write_register(c.gc_reg.hqd_dequeue_request, 2);  // reset waves (tinygrad's AM_GFX._dequeue_hqds)
  CHECK(rig.g.read_register(c.gc_reg.hqd_active) == 0);
  CHECK_FALSE(rig.g.compute_queue());
}

TEST_CASE_TEMPLATE("a queue enabled without its doorbell is reported and stays off", G, gfx11, gfx12) {
  emu_rig rig(G::gen, 64 * MiB);
  const personality& c = rig.g.chip();
  buffer ring = rig.alloc(4 * KiB);
  rig.g.write_register(c.sdma_reg.rb_base, std::uint32_t(ring.va.value >> 8));
  rig.g.write_register(c.sdma_reg.rb_base_hi, std::uint32_t(ring.va.value >> 40));
  rig.g.write_register(c.sdma_reg.rb_cntl, c.gc_table->encode("regSDMA0_QUEUE0_RB_CNTL", {{"RB_SIZE", 10}, {"RB_ENABLE", 1}}));
  CHECK_FALSE(rig.g.sdma_queue());
  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::bad_queue_setup);
  CHECK(faults[0].message.find("DOORBELL.ENABLE is 0") != std::string::npos);
}
