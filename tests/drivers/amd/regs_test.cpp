// regs_test.cpp: the generated gfx11/gfx12 register tables against a hand-written list of values.
//
// The list gives absolute register indices with the standard navi-family IP bases
// (navi10_ip_offset.h) and field positions, as tinygrad's AM driver uses them; the tables give offsets, segments and
// masks from the kernel headers. Agreement checks the generator and the curated list together.
#include <doctest/doctest.h>

#include <string_view>

#include "drivers/amd/regs/gc_11_0_0.hpp"
#include "drivers/amd/regs/gc_12_0_0.hpp"
#include "drivers/amd/regs/mmhub_3_0_0.hpp"
#include "drivers/amd/regs/mmhub_4_1_0.hpp"
#include "drivers/amd/regs/osssys_6_0_0.hpp"
#include "drivers/amd/regs/osssys_7_0_0.hpp"
#include "runtime/queue/decode.hpp"

using namespace tg::amd::regs;
using tg::queue::reg_table;

namespace {

// Absolute dword index with the table's navi10 bases.
template <class Bases>
constexpr std::uint32_t index_of(const reg_table& t, const Bases& bases, std::string_view name) {
  const tg::queue::reg_info& r = t.reg(name);
  return bases[r.base_index] + r.offset;
}
constexpr std::uint32_t gc11(std::string_view n) { return index_of(gc_11_0_0::table, gc_11_0_0::navi10_bases, n); }
constexpr std::uint32_t gc12(std::string_view n) { return index_of(gc_12_0_0::table, gc_12_0_0::navi10_bases, n); }
constexpr std::uint32_t mm3(std::string_view n) { return index_of(mmhub_3_0_0::table, mmhub_3_0_0::navi10_bases, n); }
constexpr std::uint32_t mm41(std::string_view n) { return index_of(mmhub_4_1_0::table, mmhub_4_1_0::navi10_bases, n); }
constexpr std::uint32_t ih6(std::string_view n) { return index_of(osssys_6_0_0::table, osssys_6_0_0::navi10_bases, n); }
constexpr std::uint32_t ih7(std::string_view n) { return index_of(osssys_7_0_0::table, osssys_7_0_0::navi10_bases, n); }

struct both {
  std::string_view name;
  std::uint32_t gfx11, gfx12;
};

}  // namespace

// A few hundred registers per IP, not the headers' thousands.
static_assert(gc_11_0_0::reg_count > 300 && gc_11_0_0::reg_count < 500);
static_assert(mmhub_3_0_0::reg_count > 50 && osssys_6_0_0::reg_count > 10);
static_assert(gc11("regCP_HQD_ACTIVE") == 0x320B && gc12("regCP_HQD_ACTIVE") == 0x320B);  // offset 0x1FAB + seg0 0x1260
// The example in runtime/queue/reg_table.hpp.
static_assert(gc_11_0_0::table.encode("regCP_HQD_PQ_DOORBELL_CONTROL", {{"DOORBELL_OFFSET", 6}, {"DOORBELL_EN", 1}}) ==
              0x40000018);

TEST_CASE("gc queue, VM and control registers sit at their indices with the navi bases") {
  const both regs[] = {
      {"regCP_MQD_BASE_ADDR", 0x3209, 0x3209},
      {"regCP_HQD_PQ_BASE", 0x3211, 0x3211},
      {"regCP_HQD_PQ_RPTR_REPORT_ADDR", 0x3214, 0x3214},
      {"regCP_HQD_PQ_WPTR_POLL_ADDR", 0x3216, 0x3216},
      {"regCP_HQD_PQ_DOORBELL_CONTROL", 0x3218, 0x3218},
      {"regCP_HQD_PQ_CONTROL", 0x321A, 0x321A},
      {"regCP_HQD_DEQUEUE_REQUEST", 0x3221, 0x3221},
      {"regCP_HQD_EOP_BASE_ADDR", 0x322E, 0x322E},
      {"regCP_HQD_EOP_CONTROL", 0x3230, 0x3230},
      {"regCP_HQD_PQ_WPTR_HI", 0x3240, 0x3240},
      {"regCP_MEC_RS64_CNTL", 0xC904, 0xC904},
      {"regCP_MEC_RS64_PRGRM_CNTR_START", 0xC900, 0xC900},
      {"regCP_MEC_RS64_PRGRM_CNTR_START_HI", 0xC938, 0xC938},
      {"regCP_MEC_DOORBELL_RANGE_LOWER", 0x305C, 0x305C},
      {"regCP_MEC_DOORBELL_RANGE_UPPER", 0x305D, 0x305D},
      {"regGRBM_GFX_CNTL", 0xA900, 0xA900},
      {"regGRBM_SOFT_RESET", 0x2008, 0x2008},
      {"regGRBM_CNTL", 0x2000, 0x2000},
      {"regGRBM_GFX_INDEX", 0xC200, 0xC200},
      {"regSPI_COMPUTE_QUEUE_RESET", 0x31D3, 0x31D3},
      {"regSH_MEM_BASES", 0xA9E3, 0xA9E3},
      {"regSH_MEM_CONFIG", 0xA9E4, 0xA9E4},
      {"regTCP_CNTL", 0xB9A2, 0xB9A2},
      {"regRLC_CNTL", 0xEC00, 0xEC00},
      {"regRLC_SAFE_MODE", 0xA980, 0xA980},
      {"regRLC_RLCS_BOOTLOAD_STATUS", 0xEE82, 0xEE7C},
      {"regCP_STAT", 0x21A0, 0x21A0},
      {"regSCRATCH_REG6", 0xC046, 0xC046},
      {"regSCRATCH_REG7", 0xC047, 0xC047},
      {"regGCVM_CONTEXT0_CNTL", 0x28E8, 0x2884},
      {"regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32", 0x2953, 0x28EF},
      {"regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32", 0x2954, 0x28F0},
      {"regGCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32", 0x2973, 0x290F},
      {"regGCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32", 0x2993, 0x292F},
      {"regGCVM_INVALIDATE_ENG17_REQ", 0x291C, 0x28B8},
      {"regGCVM_INVALIDATE_ENG17_ACK", 0x292E, 0x28CA},
      {"regGCVM_L2_PROTECTION_FAULT_CNTL", 0x2824, 0x282C},
      {"regGCVM_L2_PROTECTION_FAULT_ADDR_LO32", 0x2829, 0x2832},
      {"regGCVM_L2_PROTECTION_FAULT_ADDR_HI32", 0x282A, 0x2833},
      {"regGCMC_VM_FB_LOCATION_BASE", 0x28D8, 0x2874},
      {"regGCMC_VM_FB_LOCATION_TOP", 0x28D9, 0x2875},
  };
  for (const both& r : regs) {
    CAPTURE(r.name);
    CHECK(gc11(r.name) == r.gfx11);
    CHECK(gc12(r.name) == r.gfx12);
  }
  // gfx12 renamed the fault status register (gc_12_0_0_offset.h).
  CHECK(gc11("regGCVM_L2_PROTECTION_FAULT_STATUS") == 0x2828);
  CHECK(gc12("regGCVM_L2_PROTECTION_FAULT_STATUS_LO32") == 0x2830);
  CHECK(gc_12_0_0::table.find("regGCVM_L2_PROTECTION_FAULT_STATUS") == nullptr);
}

TEST_CASE("SDMA0 queue 0 registers sit at their indices with the navi bases") {
  const both regs[] = {
      {"regSDMA0_QUEUE0_RB_CNTL", 0x12E0, 0x12E0},         {"regSDMA0_QUEUE0_RB_BASE", 0x12E1, 0x12E1},
      {"regSDMA0_QUEUE0_RB_BASE_HI", 0x12E2, 0x12E2},      {"regSDMA0_QUEUE0_RB_RPTR", 0x12E3, 0x12E3},
      {"regSDMA0_QUEUE0_RB_WPTR", 0x12E5, 0x12E5},         {"regSDMA0_QUEUE0_RB_WPTR_HI", 0x12E6, 0x12E6},
      {"regSDMA0_QUEUE0_RB_RPTR_ADDR_LO", 0x12E9, 0x12E7}, {"regSDMA0_QUEUE0_RB_RPTR_ADDR_HI", 0x12E8, 0x12E8},
      {"regSDMA0_QUEUE0_IB_CNTL", 0x12EA, 0x12E9},         {"regSDMA0_QUEUE0_DOORBELL", 0x12F2, 0x12EF},
      {"regSDMA0_QUEUE0_DOORBELL_OFFSET", 0x130B, 0x12F1}, {"regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO", 0x1313, 0x12F8},
      {"regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI", 0x1312, 0x12F9}, {"regSDMA0_QUEUE0_MINOR_PTR_UPDATE", 0x1315, 0x12FB},
      {"regSDMA0_CNTL", 0x127C, 0x126D},                   {"regSDMA0_WATCHDOG_CNTL", 0x128E, 0x128B},
      {"regSDMA0_UTCL1_CNTL", 0x129C, 0x1295},             {"regSDMA0_UTCL1_PAGE", 0x129F, 0x1298},
  };
  for (const both& r : regs) {
    CAPTURE(r.name);
    CHECK(gc11(r.name) == r.gfx11);
    CHECK(gc12(r.name) == r.gfx12);
  }
  CHECK(gc11("regSDMA0_F32_CNTL") == 0xF89A);  // gfx11 "F32", gfx12 "MCU"
  CHECK(gc12("regSDMA0_MCU_CNTL") == 0xF88E);
}

TEST_CASE("MMHUB and IH registers sit at their indices with the navi bases") {
  const both mm[] = {
      {"regMMVM_INVALIDATE_ENG17_SEM", 0x1A762, 0x1A586}, {"regMMVM_INVALIDATE_ENG17_REQ", 0x1A774, 0x1A598},
      {"regMMVM_INVALIDATE_ENG17_ACK", 0x1A786, 0x1A5AA}, {"regMMVM_CONTEXT0_CNTL", 0x1A740, 0x1A564},
      {"regMMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32", 0x1A7AB, 0x1A5CF},
      {"regMMMC_VM_FB_LOCATION_BASE", 0x1A8EC, 0x1A554}, {"regMMMC_VM_FB_LOCATION_TOP", 0x1A8ED, 0x1A555},
      {"regMMMC_VM_SYSTEM_APERTURE_LOW_ADDR", 0x1A8F1, 0x1A559}, {"regMMMC_VM_MX_L1_TLB_CNTL", 0x1A8F3, 0x1A55B},
      {"regMMVM_L2_CNTL", 0x1A700, 0x1A4E4}, {"regMMVM_L2_CNTL3", 0x1A702, 0x1A4E6},
      {"regMMVM_L2_BANK_SELECT_RESERVED_CID2", 0x1A71B, 0x1A500},
  };
  for (const both& r : mm) {
    CAPTURE(r.name);
    CHECK(mm3(r.name) == r.gfx11);
    CHECK(mm41(r.name) == r.gfx12);
  }
  const both ih[] = {
      {"regIH_RB_CNTL", 0x1120, 0x1120},     {"regIH_RB_BASE", 0x1121, 0x1123},
      {"regIH_RB_BASE_HI", 0x1122, 0x1124},  {"regIH_RB_RPTR", 0x1123, 0x1121},
      {"regIH_RB_WPTR", 0x1124, 0x1122},     {"regIH_RB_WPTR_ADDR_LO", 0x1126, 0x1126},
      {"regIH_DOORBELL_RPTR", 0x1127, 0x1127},
  };
  for (const both& r : ih) {
    CAPTURE(r.name);
    CHECK(ih6(r.name) == r.gfx11);
    CHECK(ih7(r.name) == r.gfx12);
  }
}

TEST_CASE("field layouts match the values the reference driver derives from them") {
  SUBCASE("compute doorbell control for doorbell 3 is 0x40000018 (AMDGPU_NAVI10_DOORBELL_MEC_RING0)") {
    for (const reg_table* t : {&gc_11_0_0::table, &gc_12_0_0::table})
      CHECK(t->encode("regCP_HQD_PQ_DOORBELL_CONTROL", {{"DOORBELL_OFFSET", 3 * 2}, {"DOORBELL_EN", 1}}) ==
            0x40000018u);
  }
  SUBCASE("a VMID 0 TLB invalidate request is 0x00F80001 on both hubs (tinygrad's AM_GMC.flush_tlb)") {
    auto req = [](const reg_table& t, std::string_view reg) {
      return t.encode(reg, {{"PER_VMID_INVALIDATE_REQ", 1}, {"INVALIDATE_L2_PTES", 1}, {"INVALIDATE_L2_PDE0", 1},
                            {"INVALIDATE_L2_PDE1", 1}, {"INVALIDATE_L2_PDE2", 1}, {"INVALIDATE_L1_PTES", 1}});
    };
    CHECK(req(gc_11_0_0::table, "regGCVM_INVALIDATE_ENG17_REQ") == 0x00F80001u);
    CHECK(req(gc_12_0_0::table, "regGCVM_INVALIDATE_ENG17_REQ") == 0x00F80001u);
    CHECK(req(mmhub_3_0_0::table, "regMMVM_INVALIDATE_ENG17_REQ") == 0x00F80001u);
    CHECK(req(mmhub_4_1_0::table, "regMMVM_INVALIDATE_ENG17_REQ") == 0x00F80001u);
  }
  SUBCASE("PAGE_TABLE_BLOCK_SIZE moves from bits 6:3 to 7:4 on gfx12 (gc_11_0_0_sh_mask.h, gc_12_0_0_sh_mask.h)") {
    CHECK(gc_11_0_0::table.encode("regGCVM_CONTEXT0_CNTL", {{"PAGE_TABLE_BLOCK_SIZE", 0xF}}) == 0xF0u >> 1);
    CHECK(gc_12_0_0::table.encode("regGCVM_CONTEXT0_CNTL", {{"PAGE_TABLE_BLOCK_SIZE", 0xF}}) == 0xF0u);
  }
  SUBCASE("GRBM_GFX_INDEX narrows its index fields on gfx12 (gc_12_0_0_sh_mask.h)") {
    CHECK(gc_11_0_0::table.field(gc_11_0_0::table.reg("regGRBM_GFX_INDEX"), "INSTANCE_INDEX").mask == 0xFFu);
    CHECK(gc_12_0_0::table.field(gc_12_0_0::table.reg("regGRBM_GFX_INDEX"), "INSTANCE_INDEX").mask == 0x7Fu);
    CHECK(gc_12_0_0::table.field(gc_12_0_0::table.reg("regGRBM_GFX_INDEX"), "SA_INDEX").mask == 0x300u);
    CHECK(gc_12_0_0::table.field(gc_12_0_0::table.reg("regGRBM_GFX_INDEX"), "SE_INDEX").mask == 0xF0000u);
  }
  SUBCASE("the SDMA ring control of tinygrad's AM_SDMA.setup_ring, for a 1 MiB ring") {
    // rb_size = log2(1 MiB / 4) = 18, poll enable bit 11, writeback enable 12, timer 4, priv, enable.
    CHECK(gc_11_0_0::table.encode("regSDMA0_QUEUE0_RB_CNTL",
                                  {{"RB_ENABLE", 1}, {"RB_SIZE", 18}, {"F32_WPTR_POLL_ENABLE", 1},
                                   {"RPTR_WRITEBACK_ENABLE", 1}, {"RPTR_WRITEBACK_TIMER", 4}, {"RB_PRIV", 1}}) ==
          (1u | 18u << 1 | 1u << 11 | 1u << 12 | 4u << 16 | 1u << 23));
    CHECK(gc_12_0_0::table.encode("regSDMA0_QUEUE0_RB_CNTL", {{"MCU_WPTR_POLL_ENABLE", 1}}) == 1u << 11);
    CHECK(gc_11_0_0::table.encode("regSDMA0_QUEUE0_DOORBELL", {{"ENABLE", 1}}) == 1u << 28);
    CHECK(gc_12_0_0::table.encode("regSDMA0_QUEUE0_DOORBELL_OFFSET", {{"OFFSET", 256 * 2}}) == 0x800u);
  }
  SUBCASE("GRBM_GFX_CNTL selects me/pipe/queue/vmid (gc_11_0_0_sh_mask.h)") {
    CHECK(gc_11_0_0::table.encode("regGRBM_GFX_CNTL", {{"PIPEID", 3}, {"MEID", 1}, {"VMID", 0xF}, {"QUEUEID", 7}}) ==
          (3u | 1u << 2 | 0xFu << 4 | 7u << 8));
  }
  SUBCASE("RLC bootload completion is bit 31 on both") {
    CHECK(gc_11_0_0::table.decode("regRLC_RLCS_BOOTLOAD_STATUS", "BOOTLOAD_COMPLETE", 0x80000000) == 1);
    CHECK(gc_12_0_0::table.decode("regRLC_RLCS_BOOTLOAD_STATUS", "BOOTLOAD_COMPLETE", 0x80000000) == 1);
  }
}

TEST_CASE("the full GC table names registers in a decoded PM4 stream") {
  tg::queue::cmd_buffer cb;
  tg::queue::pm4::emit_wait_reg(cb, gc11("regCP_HQD_ACTIVE"), tg::queue::compare::equal, 0, 1);
  std::string text = tg::queue::decode_pm4(cb, tg::queue::pm4::gfx_version::gfx11, &gc_11_0_0::table);
  CHECK(text == "[0000] WAIT_REG_MEM regCP_HQD_ACTIVE & 0x1 == 0x0 poll=4\n");
}
