// ih_test.cpp: a GC hub page fault lands in the IH ring the driver programmed (tinygrad's AM_IH.init_hw), with
// the entry layout gmc_v11_0_process_interrupt decodes, the write pointer in its register and its
// write-back word, and the overflow bit when the ring is full.
#include <doctest/doctest.h>

#include "tests/drivers/emu/emu_rig.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg::emu;
using namespace tg::emu::test;
namespace sdma = tg::queue::sdma;
using tg::queue::cmd_buffer;

namespace {

struct ih_setup {
  gpu_pa ring, wb;  // VRAM offsets == MC addresses (FB base 0)
  std::uint32_t ring_bytes;
};

// Ring 0 as tinygrad's AM_IH.init_hw programs it (rb_size = log2 of the ring in dwords).
ih_setup program_ih(emu_rig& rig, std::uint32_t ring_bytes) {
  ih_setup s{rig.data.allocate(ring_bytes, 256), rig.data.allocate(4096, 4096), ring_bytes};
  rig.g.vram().write(s.ring, std::vector<std::byte>(ring_bytes, std::byte{0xEE}));
  rig.g.vram().store32(s.wb, 0xFFFFFFFFu);
  const ih_registers& r = rig.g.chip().ih_reg;
  const unsigned rb_size = std::countr_zero(ring_bytes / 4);
  rig.g.write_register(r.rb_base, std::uint32_t(s.ring.value >> 8));
  rig.g.write_register(r.rb_base_hi, std::uint32_t(s.ring.value >> 40));
  rig.g.write_register(r.rb_wptr_addr_lo, std::uint32_t(s.wb.value));
  rig.g.write_register(r.rb_wptr_addr_hi, std::uint32_t(s.wb.value >> 32));
  rig.g.write_register(r.rb_wptr, 0);
  rig.g.write_register(r.rb_rptr, 0);
  // RB_ENABLE 0, RB_SIZE 5:1, WPTR_OVERFLOW_ENABLE 16, ENABLE_INTR 17, MC_SPACE 4 << 28 (osssys sh_mask).
  rig.g.write_register(r.rb_cntl, 1u | rb_size << 1 | 1u << 16 | 1u << 17 | 4u << 28);
  return s;
}

// An SDMA copy from an unmapped VA: one read fault there.
void fault_at(emu_rig& rig, gpu_va va) {
  sdma_ring q(rig, 4 * KiB);
  buffer dst = rig.alloc(4 * KiB);
  cmd_buffer cb;
  sdma::emit_copy_linear(cb, dst.va, va, 16);
  q.submit(cb);
  rig.g.step_until_idle();
}

}  // namespace

TEST_CASE_TEMPLATE("a page fault writes a UTCL2 entry into the IH ring and advances its write pointer", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  const ih_setup s = program_ih(rig, 4 * KiB);
  const gpu_va bad = va_base + 0x7'0012'3456ull;  // VA bit 45 set: DW5 must carry bits 47:44
  fault_at(rig, bad);
  REQUIRE(rig.g.faults().size() == 1);

  vram& v = rig.g.vram();
  const std::uint32_t dw0 = v.load32(s.ring);
  CHECK((dw0 & 0xFF) == 0x0Au);        // client: GFX (SOC21_IH_CLIENTID_GFX)
  CHECK(((dw0 >> 8) & 0xFF) == 0u);    // source: UTCL2 fault
  CHECK(((dw0 >> 24) & 0xF) == 0u);    // vmid 0
  CHECK((dw0 >> 31) == 0u);            // GFX hub
  // gmc_v11: addr = src_data[0] << 12 | (src_data[1] & 0xF) << 44.
  const std::uint64_t addr = std::uint64_t{v.load32(s.ring + 16)} << 12 | std::uint64_t{v.load32(s.ring + 20) & 0xF} << 44;
  CHECK(addr == (bad.value & ~0xFFFull));
  CHECK((v.load32(s.ring + 20) & 0x20) == 0u);  // a read
  CHECK(v.load32(s.ring + 32) == 0xEEEEEEEEu);  // only one entry

  const ih_registers& r = rig.g.chip().ih_reg;
  CHECK(rig.g.read_register(r.rb_wptr) == 32u);  // byte offset, OFFSET field bits 17:2
  CHECK(v.load32(s.wb) == 32u);
  CHECK(rig.g.ih().entries == 1);
}

TEST_CASE_TEMPLATE("a full IH ring sets RB_OVERFLOW; WPTR_OVERFLOW_CLEAR clears it", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  const ih_setup s = program_ih(rig, 64);  // room for one entry: the second would reach RPTR
  const ih_registers& r = rig.g.chip().ih_reg;
  fault_at(rig, va_base + 0x1000'0000);
  CHECK(rig.g.read_register(r.rb_wptr) == 32u);
  fault_at(rig, va_base + 0x2000'0000);
  CHECK(rig.g.read_register(r.rb_wptr) == (32u | 1u));  // RB_OVERFLOW, offset unchanged
  CHECK(rig.g.vram().load32(s.wb) == (32u | 1u));
  CHECK(rig.g.vram().load32(s.ring + 32) == 0xEEEEEEEEu);  // nothing overwritten
  CHECK(rig.g.ih().dropped == 1);

  // The driver consumes the entry, then pulses the clear.
  rig.g.write_register(r.rb_rptr, 32);
  const std::uint32_t cntl = rig.g.read_register(r.rb_cntl);
  rig.g.write_register(r.rb_cntl, cntl | 0x80000000u);
  CHECK(rig.g.read_register(r.rb_wptr) == 32u);
  CHECK((rig.g.read_register(r.rb_cntl) & 0x80000000u) == 0u);
  fault_at(rig, va_base + 0x3000'0000);
  CHECK(rig.g.read_register(r.rb_wptr) == 0u);  // wrapped: the entry went to offset 32
  CHECK(rig.g.vram().load32(s.ring + 32 + 16) == std::uint32_t((va_base.value + 0x3000'0000) >> 12));
}

TEST_CASE("without an enabled IH ring a fault writes nothing") {
  emu_rig rig(gfx_gen::gfx11);
  fault_at(rig, va_base + 0x1000'0000);
  CHECK(rig.g.faults().size() == 1);
  CHECK(rig.g.ih().entries == 0);
}
