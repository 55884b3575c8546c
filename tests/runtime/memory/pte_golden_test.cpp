// pte_golden_test.cpp: gfx11 and gfx12 PDE/PTE values checked against numbers worked out by hand
// from the Linux 6.12 amdgpu bit positions, and the walker's decoding of the same numbers.
//
// Bits used (drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h): VALID 0 (:57), SYSTEM 1 (:58), SNOOPED 2
// (:59), EXECUTABLE 4 (:65), READABLE 5 (:67), WRITEABLE 6 (:68), FRAG (x & 0x1f) << 7 (:70),
// PDE_PTE 54 (:76), MTYPE_NV10 mtype << 48 (:114), MTYPE_GFX12 mtype << 54 (:125), IS_PTE and
// PDE_PTE_GFX12 63 (:132, :139). MTYPE_UC = 3 (include/soc21_enum.h:168, soc24_enum.h:282).
// Which bits each generation sets on which level: gmc_v11_0.c:482-532, gmc_v12_0.c:499-546,
// amdgpu_vm_pt.c:686-687 (PDB leaves get PDE_PTE_FLAG), kfd_svm.c:1333 (gfx12 PTEs get IS_PTE).
#include <doctest/doctest.h>

#include "runtime/memory/host_vram.hpp"
#include "runtime/memory/page_table_walker.hpp"
#include "runtime/memory/pte_format.hpp"

using namespace tg::memory;

namespace {

constexpr page_flags vram_rwx{};
constexpr page_flags vram_rwx_uc{page_location::vram, false, true, true, true, true};
constexpr page_flags system_snooped_rw_uc{page_location::system, true, true, true, true, false};

}  // namespace

// VALID | EXECUTABLE | READABLE | WRITEABLE = 0x1 | 0x10 | 0x20 | 0x40 = 0x71.
// FRAG(4) = 4 << 7 = 0x200, FRAG(9) = 9 << 7 = 0x480. MTYPE 3 << 48 = 0x0003'0000'0000'0000,
// 3 << 54 = 0x00C0'0000'0000'0000. Bit 54 = 0x0040'0000'0000'0000, bit 63 = 0x8000'0000'0000'0000.
static_assert(encode_leaf(gfx_gen::gfx11, pt_level::ptb, {0x1234'5000}, vram_rwx, 0) == 0x0000'0000'1234'5071ull);
static_assert(encode_leaf(gfx_gen::gfx11, pt_level::ptb, {0x1234'0000}, vram_rwx, 4) == 0x0000'0000'1234'0271ull);
static_assert(encode_leaf(gfx_gen::gfx11, pt_level::ptb, {0x1234'0000}, vram_rwx_uc, 4) == 0x0003'0000'1234'0271ull);
static_assert(encode_leaf(gfx_gen::gfx11, pt_level::pdb0, {0x4000'0000}, vram_rwx, 9) == 0x0040'0000'4000'04F1ull);
// SYSTEM | SNOOPED | VALID | READABLE | WRITEABLE = 0x2 | 0x4 | 0x1 | 0x20 | 0x40 = 0x67.
static_assert(encode_leaf(gfx_gen::gfx11, pt_level::ptb, {0x7'F000'0000}, system_snooped_rw_uc, 0) ==
              0x0003'0007'F000'0067ull);
static_assert(encode_leaf(gfx_gen::gfx12, pt_level::ptb, {0x1234'5000}, vram_rwx, 0) == 0x8000'0000'1234'5071ull);
static_assert(encode_leaf(gfx_gen::gfx12, pt_level::ptb, {0x1234'0000}, vram_rwx_uc, 4) == 0x80C0'0000'1234'0271ull);
static_assert(encode_leaf(gfx_gen::gfx12, pt_level::pdb0, {0x4000'0000}, vram_rwx, 9) == 0x8000'0000'4000'04F1ull);
static_assert(encode_leaf(gfx_gen::gfx12, pt_level::ptb, {0x7'F000'0000}, system_snooped_rw_uc, 0) ==
              0x80C0'0007'F000'0067ull);
// A PDE is the child table's address | VALID on both (no BFS/TF: no translate_further on gfx11/12).
static_assert(encode_pde({0x0001'2345'6000}) == 0x0001'2345'6001ull);

TEST_CASE("gfx11 and gfx12 differ exactly in the MTYPE field and the leaf marker") {
  const auto a = encode_leaf(gfx_gen::gfx11, pt_level::pdb0, {0x20'0000}, vram_rwx_uc, 9);
  const auto b = encode_leaf(gfx_gen::gfx12, pt_level::pdb0, {0x20'0000}, vram_rwx_uc, 9);
  // Bit 54 is PDE_PTE on gfx11 and the low MTYPE bit on gfx12; for an uncached 2 MiB leaf both
  // set it, so it cancels.
  CHECK((a ^ b) == 0x0003'0000'0000'0000ull      // gfx11 MTYPE UC, bits 49:48
                       + 0x0080'0000'0000'0000ull  // gfx12 MTYPE high bit 55
                       + 0x8000'0000'0000'0000ull);  // gfx12 PDE_PTE_GFX12, bit 63
}

namespace {

// Tables written by hand: root 0x1000 -> PDB1 0x2000 (entry 0) -> PDB0 0x3000 (entry 3), which
// holds a 2 MiB leaf at entry 5 and a PTB 0x4000 at entry 6, whose entry 7 maps system memory.
host_vram hand_made_tables(std::uint64_t huge_leaf, std::uint64_t system_pte) {
  host_vram vram(1 << 20);
  for (std::uint64_t page = 0x1000; page <= 0x4000; page += 0x1000)
    for (unsigned i = 0; i < 512; ++i) vram.write64({page + 8u * i}, 0);
  vram.write64({0x1000 + 8 * 0}, 0x2001);
  vram.write64({0x2000 + 8 * 3}, 0x3001);
  vram.write64({0x3000 + 8 * 5}, huge_leaf);
  vram.write64({0x3000 + 8 * 6}, 0x4001);
  vram.write64({0x4000 + 8 * 7}, system_pte);
  return vram;
}

constexpr gpu_va base{std::uint64_t{1} << 45};
constexpr std::uint64_t GiB = 1u << 30, MiB = 1u << 20;

void check_hand_made_walk(gfx_gen gen, host_vram& vram) {
  const page_table_walk w = walk_page_tables(gen, vram, {0x1000}, base);
  CHECK(w.problems.empty());
  CHECK(w.table_count == 4);
  REQUIRE(w.leaves.size() == 2);
  const walked_leaf& huge = w.leaves[0];
  CHECK(huge.va == base + 3 * GiB + 5 * 2 * MiB);
  CHECK(huge.size_bytes == 2 * MiB);
  CHECK(huge.pa == gpu_pa{0x4000'0000});
  CHECK(huge.level == 2);
  CHECK(huge.fragment == 9);
  CHECK(huge.mtype == 0);
  CHECK((huge.readable && huge.writable && huge.executable && !huge.system && !huge.snooped));
  const walked_leaf& sys = w.leaves[1];
  CHECK(sys.va == base + 3 * GiB + 6 * 2 * MiB + 7 * 4096);
  CHECK(sys.size_bytes == 4096);
  CHECK(sys.pa == gpu_pa{0x7'F000'0000});
  CHECK(sys.level == 3);
  CHECK(sys.mtype == 3);
  CHECK((sys.system && sys.snooped && sys.readable && sys.writable && !sys.executable));

  const auto t = translate(gen, vram, {0x1000}, base, base + 3 * GiB + 5 * 2 * MiB + 0x1234);
  REQUIRE(t.has_value());
  CHECK(t->pa == gpu_pa{0x4000'0000});
  CHECK_FALSE(translate(gen, vram, {0x1000}, base, base + 3 * GiB).has_value());
}

}  // namespace

TEST_CASE("the walker decodes hand-written gfx11 tables") {
  host_vram vram = hand_made_tables(0x0040'0000'4000'04F1ull, 0x0003'0007'F000'0067ull);
  check_hand_made_walk(gfx_gen::gfx11, vram);
}

TEST_CASE("the walker decodes hand-written gfx12 tables") {
  host_vram vram = hand_made_tables(0x8000'0000'4000'04F1ull, 0x80C0'0007'F000'0067ull);
  check_hand_made_walk(gfx_gen::gfx12, vram);
}

TEST_CASE("the walker reports entries that break the documented format") {
  SUBCASE("a gfx12 PTE without IS_PTE") {
    host_vram vram = hand_made_tables(0x8000'0000'4000'04F1ull, 0x00C0'0007'F000'0067ull);
    const auto w = walk_page_tables(gfx_gen::gfx12, vram, {0x1000}, base);
    REQUIRE(w.problems.size() == 1);
    CHECK(w.problems[0] == "PTB entry for VA 0x2000c0c07000 = 0xc00007f0000067: a gfx12 PTE without IS_PTE (bit 63)");
  }
  SUBCASE("gfx12 tables read as gfx11") {
    host_vram vram = hand_made_tables(0x8000'0000'4000'04F1ull, 0x80C0'0007'F000'0067ull);
    const auto w = walk_page_tables(gfx_gen::gfx11, vram, {0x1000}, base);
    CHECK_FALSE(w.problems.empty());
  }
  SUBCASE("a 2 MiB leaf whose fragment is smaller than 2 MiB") {
    host_vram vram = hand_made_tables(0x0040'0000'4000'0071ull, 0x0003'0007'F000'0067ull);
    const auto w = walk_page_tables(gfx_gen::gfx11, vram, {0x1000}, base);
    REQUIRE(w.problems.size() == 1);
    CHECK(w.problems[0] == "PDB0 entry for VA 0x2000c0a00000 = 0x40000040000071: a fragment smaller than the leaf itself");
  }
}
