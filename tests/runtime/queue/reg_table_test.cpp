// reg_table_test.cpp: register lookup, encode and decode by field name.
#include <doctest/doctest.h>

#include <iterator>

#include "runtime/queue/pm4.hpp"
#include "runtime/queue/reg_table.hpp"

using namespace tg::queue;

namespace {

// A hand-made table in the generated shape: two registers, the second with an 8-bit field at 4.
constexpr reg_field demo_fields[] = {{"LOW", 0x0000000F, 0}, {"MID", 0x00000FF0, 4}, {"ALL", 0xFFFFFFFF, 0}};
constexpr reg_info demo_regs[] = {{"regALPHA", 0x10, 0, 0, 2}, {"regBETA", 0x20, 1, 2, 1}};
constexpr reg_table demo{"demo", demo_regs, demo_fields};

constexpr reg_info unsorted_regs[] = {{"regBETA", 0x20, 1, 2, 1}, {"regALPHA", 0x10, 0, 0, 2}};
constexpr reg_field bad_fields[] = {{"GAP", 0x00000006, 0}};  // mask does not start at its shift
constexpr reg_info one_reg[] = {{"regONE", 0, 0, 0, 1}};

}  // namespace

static_assert(is_well_formed(demo));
static_assert(!is_well_formed(reg_table{"unsorted", unsorted_regs, demo_fields}));
static_assert(!is_well_formed(reg_table{"bad mask", one_reg, bad_fields}));
static_assert(demo.encode("regALPHA", {{"LOW", 5}, {"MID", 0xAB}}) == 0xAB5);
static_assert(demo.decode("regALPHA", "MID", 0xAB5) == 0xAB);
static_assert(demo.modify("regALPHA", 0xFFFFFFFF, {{"MID", 0}}) == 0xFFFFF00F);
// The generated PM4 tables answer at compile time: COMPUTE_DISPATCH_INITIATOR as tinygrad's ops_amd.py writes it.
static_assert(pm4::gc_11_0_0::table.encode("regCOMPUTE_DISPATCH_INITIATOR",
                                           {{"COMPUTE_SHADER_EN", 1}, {"FORCE_START_AT_000", 1}, {"CS_W32_EN", 1}}) ==
              0x8005);

TEST_CASE("registers are found by their kernel spelling") {
  REQUIRE(demo.find("regBETA") != nullptr);
  CHECK(demo.find("regBETA")->offset == 0x20);
  CHECK(demo.find("BETA") == nullptr);
  CHECK(demo.find("regGAMMA") == nullptr);
  CHECK(demo.find_at(1, 0x20) == &demo_regs[1]);
  CHECK(demo.find_at(0, 0x20) == nullptr);
  CHECK_THROWS_WITH_AS(demo.reg("regGAMMA"),
                       "demo: no register regGAMMA in the generated table (spelled as in demo_offset.h, with the reg "
                       "prefix? curated in scripts/gen_amd_regs.py?)",
                       tg::usage_error);
}

TEST_CASE("fields encode and decode by name and refuse values that do not fit") {
  const reg_info& alpha = demo.reg("regALPHA");
  CHECK(demo.fields_of(alpha).size() == 2);
  CHECK(demo.field(alpha, "MID").max_value() == 0xFF);
  CHECK(demo.encode("regALPHA", {{"MID", 1}}) == 0x10);
  CHECK_THROWS_WITH_AS(demo.encode("regALPHA", {{"MID", 0x100}}),
                       "register field MID: value 0x100 does not fit its mask 0xff0 (largest value 0xff)",
                       tg::usage_error);
  CHECK_THROWS_WITH_AS(demo.encode("regALPHA", {{"HIGH", 1}}), "demo: register regALPHA has no field HIGH",
                       tg::usage_error);
}

TEST_CASE("describe shows a value with every field") {
  CHECK(describe(demo, demo.reg("regALPHA"), 0xAB5) == "regALPHA = 0x00000ab5 {LOW=5, MID=0xab}");
  CHECK(describe(demo, demo.reg("regBETA"), 7) == "regBETA = 0x00000007 {ALL=7}");
  constexpr reg_info bare[] = {{"regBARE", 0, 0, 0, 0}};
  reg_table no_fields{"bare", bare, {}};
  CHECK(describe(no_fields, bare[0], 1) == "regBARE = 0x00000001");
}

TEST_CASE("the queue tables give gfx11 and gfx12 their own field layouts") {
  // COMPUTE_TMPRING_SIZE.WAVESIZE is bits 26:12 on gfx11 and 29:12 on gfx12 (gc_11_0_0_sh_mask.h, gc_12_0_0_sh_mask.h).
  const reg_table& t11 = pm4::queue_regs(pm4::gfx_version::gfx11);
  const reg_table& t12 = pm4::queue_regs(pm4::gfx_version::gfx12);
  CHECK(t11.field(t11.reg("regCOMPUTE_TMPRING_SIZE"), "WAVESIZE").mask == 0x07FFF000u);
  CHECK(t12.field(t12.reg("regCOMPUTE_TMPRING_SIZE"), "WAVESIZE").mask == 0x3FFFF000u);
  CHECK(pm4::reg_index(pm4::gfx_version::gfx11, "regCOMPUTE_USER_DATA_0") == 0x2E40);  // gc_11_0_0_offset.h, navi bases
  CHECK_THROWS_AS(pm4::reg_index(pm4::gfx_version::gfx11, "regCP_HQD_ACTIVE"), tg::usage_error);  // not SH/UCONFIG
  CHECK(std::size(pm4::gc_11_0_0::regs) == pm4::gc_11_0_0::reg_count);
}
