// mmu_test.cpp: the emulated GC hub translating through the driver's page tables: a TLB that only
// an invalidation refreshes, faults latched in registers, and the system aperture.
#include <doctest/doctest.h>

#include "tests/drivers/emu/emu_rig.hpp"
#include "runtime/queue/pm4.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg::emu;
using namespace tg::emu::test;
namespace sdma = tg::queue::sdma;
using tg::queue::cmd_buffer;

namespace {

// SDMA copies 4 bytes from `from` to `to`, then fences; the access goes through the TLB.
void copy_word(emu_rig& rig, sdma_ring& q, gpu_va to, gpu_va from) {
  cmd_buffer cb;
  sdma::emit_copy_linear(cb, to, from, 4);
  q.submit(cb);
  rig.g.step_until_idle();
}

std::uint32_t fault_field(emu_rig& rig, const char* field) {
  const personality& c = rig.g.chip();
  const char* reg = c.gen == gfx_gen::gfx12 ? "regGCVM_L2_PROTECTION_FAULT_STATUS_LO32" : "regGCVM_L2_PROTECTION_FAULT_STATUS";
  return c.gc_table->decode(reg, field, rig.g.read_register(c.gc_reg.vm_fault_status));
}

}  // namespace

TEST_CASE_TEMPLATE("a remap without a TLB flush keeps the old translation until the driver flushes", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  buffer page = rig.alloc(4 * KiB), out = rig.alloc(4 * KiB);
  const gpu_pa other = rig.data.allocate(4 * KiB);
  rig.store32(page, 0, 0xAAAA'AAAAu);
  rig.g.vram().store32(other, 0xBBBB'BBBBu);

  copy_word(rig, q, out.va, page.va);
  CHECK(rig.load32(out, 0) == 0xAAAA'AAAAu);

  rig.flush.enabled = false;  // the bug under test: page tables change, no invalidation
  rig.pt.remap(page.va, tg::memory::phys_chunk{other, 4 * KiB}, {});
  copy_word(rig, q, out.va + 4, page.va);
  CHECK(rig.load32(out, 4) == 0xAAAA'AAAAu);  // stale, as on hardware

  rig.flush.flush();
  copy_word(rig, q, out.va + 8, page.va);
  CHECK(rig.load32(out, 8) == 0xBBBB'BBBBu);
  CHECK(rig.g.faults().empty());
  CHECK(rig.g.tlb().invalidations >= 1);
}

TEST_CASE_TEMPLATE("an unmap without a flush leaves a stale translation; after the flush the access faults", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  buffer page = rig.alloc(4 * KiB), out = rig.alloc(4 * KiB);
  rig.store32(page, 0, 0x600D'600Du);
  copy_word(rig, q, out.va, page.va);
  rig.flush.enabled = false;
  rig.pt.unmap(page.va, 4 * KiB);
  copy_word(rig, q, out.va + 4, page.va);
  CHECK(rig.load32(out, 4) == 0x600D'600Du);
  CHECK(rig.g.faults().empty());
  rig.flush.flush();
  copy_word(rig, q, out.va + 8, page.va);
  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].address == page.va);
}

TEST_CASE_TEMPLATE("an unmapped access is a fault with its address, in the record and the fault registers", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  buffer out = rig.alloc(4 * KiB), sig = rig.alloc(4 * KiB);
  const gpu_va hole = va_base + (std::uint64_t{1} << 40) + 0x5678;
  cmd_buffer cb;
  sdma::emit_copy_linear(cb, out.va, hole, 64);
  sdma::emit_fence(cb, sig.va, 1);
  q.submit(cb);
  rig.g.step_until_idle();

  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::page_fault);
  CHECK(faults[0].engine == engine_id::sdma);
  CHECK(faults[0].address == hole);
  CHECK_FALSE(faults[0].write);
  CHECK(faults[0].stream_offset == 0);
  CHECK(rig.load32(sig, 0) == 0);
  CHECK(rig.g.sdma_queue()->halted);

  const gc_registers& r = rig.g.chip().gc_reg;
  CHECK(rig.g.read_register(r.vm_fault_addr_lo) == std::uint32_t(hole.value >> 12));  // page number (VA >> 12)
  CHECK(rig.g.read_register(r.vm_fault_addr_hi) == std::uint32_t(hole.value >> 44));
  CHECK(fault_field(rig, "CID") == 13);  // SDMA0
  CHECK(fault_field(rig, "RW") == 0);
  CHECK(fault_field(rig, "PERMISSION_FAULTS") == 1);
  CHECK(fault_field(rig, "MORE_FAULTS") == 0);

  SUBCASE("FAULT_CNTL.CLEAR_PROTECTION_FAULT_STATUS_ADDR clears them") {
    const auto& t = *rig.g.chip().gc_table;
    rig.g.write_register(r.vm_fault_cntl, t.encode("regGCVM_L2_PROTECTION_FAULT_CNTL", {{"CLEAR_PROTECTION_FAULT_STATUS_ADDR", 1}}));
    CHECK(rig.g.read_register(r.vm_fault_status) == 0);
    CHECK(rig.g.read_register(r.vm_fault_addr_lo) == 0);
    CHECK(rig.g.read_register(r.vm_fault_cntl) == 0);
  }
  SUBCASE("the status registers are read-only to the host") {
    rig.g.write_register(r.vm_fault_status, 0);
    CHECK(rig.g.read_register(r.vm_fault_status) != 0);
  }
}

TEST_CASE_TEMPLATE("a write fault names the CPC client and RW; a later fault only sets MORE_FAULTS", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring q(rig, 4 * KiB);
  sdma_ring s(rig, 4 * KiB);
  const gpu_va first = va_base + (std::uint64_t{2} << 40), second = first + (std::uint64_t{1} << 30);
  cmd_buffer cb;
  tg::queue::pm4::release_mem r;
  r.address = first;
  r.value = 1;
  tg::queue::pm4::emit_release_mem(cb, r);
  q.submit(cb);
  rig.g.step_until_idle();
  CHECK(fault_field(rig, "CID") == 5);  // CPC
  CHECK(fault_field(rig, "RW") == 1);

  cmd_buffer cb2;
  sdma::emit_fence(cb2, second, 1);
  s.submit(cb2);
  rig.g.step_until_idle();
  CHECK(fault_field(rig, "MORE_FAULTS") == 1);
  CHECK(fault_field(rig, "CID") == 5);
  CHECK(rig.g.read_register(rig.g.chip().gc_reg.vm_fault_addr_lo) == std::uint32_t(first.value >> 12));
  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 2);
  CHECK(faults[0].write);
  CHECK(faults[1].address == second);
}

TEST_CASE_TEMPLATE("a write to a page mapped read-only is a permission fault", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  const gpu_va va = rig.vas.allocate(4 * KiB);
  rig.pt.map(va, tg::memory::phys_chunk{rig.data.allocate(4 * KiB), 4 * KiB}, {.writable = false});
  cmd_buffer cb;
  sdma::emit_fence(cb, va, 1);
  q.submit(cb);
  rig.g.step_until_idle();
  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].write);
  CHECK(fault_field(rig, "PERMISSION_FAULTS") == 4);
}

TEST_CASE_TEMPLATE("without a valid page-table base even the ring fetch faults", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  rig.g.write_register(rig.g.chip().gc_reg.vm_pt_base_lo, 0);  // no valid bit
  rig.flush.flush();
  cmd_buffer cb(4, 0);
  q.submit(cb);
  rig.g.step_until_idle();
  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 2);  // the doorbell's check of the wptr shadow, then the fetch that halts
  CHECK(faults[0].address == q.gart.va + sdma_ring::wptr_at);
  CHECK(faults[1].address == q.ring.va);
  CHECK(faults[1].message.find("no page table") != std::string::npos);
  CHECK(rig.g.sdma_queue()->halted);
}

TEST_CASE_TEMPLATE("the system aperture maps MC addresses straight to VRAM", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  const gc_registers& r = rig.g.chip().gc_reg;
  const std::uint64_t vram = rig.g.vram().size_bytes();
  rig.g.write_register(r.system_aperture_low, 0);  // fb_base >> 18 .. fb_end >> 18 (tinygrad's AM_GMC.init_hub)
  rig.g.write_register(r.system_aperture_high, std::uint32_t((vram - 1) >> 18));
  const gpu_pa pa = rig.data.allocate(4 * KiB);
  cmd_buffer cb;
  sdma::emit_fence(cb, {pa.value}, 0x5151);  // an MC address: fb_base (0) + pa
  q.submit(cb);
  rig.g.step_until_idle();
  CHECK(rig.g.faults().empty());
  CHECK(rig.g.vram().load32(pa) == 0x5151);
}
