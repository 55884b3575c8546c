// page_table_test.cpp: map, unmap and remap on gfx11 and gfx12 tables, checked through the
// independent walker; page-size and fragment choice; errors.
#include <doctest/doctest.h>

#include "tests/runtime/memory/page_table_rig.hpp"

using namespace tg::memory;
using namespace tg::memory::test;

namespace {

constexpr gfx_gen both_gens[] = {gfx_gen::gfx11, gfx_gen::gfx12};

}  // namespace

TEST_CASE("a 4 KiB mapping creates the PDB1, PDB0 and PTB tables and one PTE") {
  for (gfx_gen gen : both_gens) {
    CAPTURE(gen);
    page_table_rig r(gen);
    r.pt.map(va_base + 0x5000, phys_chunk{{0x10'0000}, 4 * KiB}, {});
    CHECK(r.pt.table_count() == 4);
    CHECK(r.pool.free_bytes() == 64 * MiB - 4 * 4 * KiB);
    const auto w = r.walk();
    CHECK(w.problems.empty());
    CHECK(w.table_count == 4);
    REQUIRE(w.leaves.size() == 1);
    CHECK(w.leaves[0].va == va_base + 0x5000);
    CHECK(w.leaves[0].pa == gpu_pa{0x10'0000});
    CHECK(w.leaves[0].level == 3);
    CHECK(w.leaves[0].fragment == 0);
    CHECK(r.tlb.calls == 1);
    CHECK(r.tlb.last_first == va_base + 0x5000);
    CHECK(r.tlb.last_size == 4 * KiB);
  }
}

TEST_CASE("a 64 KiB-aligned mapping gets sixteen PTEs with fragment 4") {
  for (gfx_gen gen : both_gens) {
    page_table_rig r(gen);
    r.pt.map(va_base + 0x30'0000 + 64 * KiB, phys_chunk{{0x12'0000}, 64 * KiB}, {});
    const auto w = r.walk();
    REQUIRE(w.leaves.size() == 16);
    for (const auto& l : w.leaves) {
      CHECK(l.level == 3);
      CHECK(l.fragment == 4);
    }
    CHECK(fragment_problems(w) == "");
  }
}

TEST_CASE("2 MiB-aligned memory is mapped with PDB0 leaves and no PTB") {
  for (gfx_gen gen : both_gens) {
    page_table_rig r(gen);
    r.pt.map(va_base + 4 * MiB, phys_chunk{{8 * MiB}, 6 * MiB}, {});
    CHECK(r.pt.table_count() == 3);
    const auto w = r.walk();
    CHECK(w.problems.empty());
    REQUIRE(w.leaves.size() == 3);
    for (const auto& l : w.leaves) {
      CHECK(l.level == 2);
      CHECK(l.size_bytes == 2 * MiB);
    }
    CHECK(w.leaves[0].pa == gpu_pa{8 * MiB});
    CHECK(w.leaves[2].pa == gpu_pa{12 * MiB});
    CHECK(w.leaves[0].fragment == 10);  // the first 4 MiB are 4 MiB-aligned in VA and PA
    CHECK(w.leaves[1].fragment == 10);
    CHECK(w.leaves[2].fragment == 9);   // the last 2 MiB stand alone
    CHECK(fragment_problems(w) == "");
  }
}

TEST_CASE("physical memory that is not 2 MiB-aligned falls back to PTEs with smaller fragments") {
  page_table_rig r(gfx_gen::gfx11);
  r.pt.map(va_base + 2 * MiB, phys_chunk{{2 * MiB + 64 * KiB}, 2 * MiB}, {});
  const auto w = r.walk();
  REQUIRE(w.leaves.size() == 512);
  for (const auto& l : w.leaves) CHECK(l.level == 3);
  CHECK(w.leaves.front().fragment == 4);  // the PA's alignment (64 KiB) limits the fragment
  CHECK(fragment_problems(w) == "");
  CHECK(runs_of(w) == std::vector<run>{{va_base.value + 2 * MiB, 2 * MiB, 2 * MiB + 64 * KiB, {}}});
}

TEST_CASE("several chunks are mapped back to back, contiguous ones joined into larger fragments") {
  page_table_rig r(gfx_gen::gfx12);
  const phys_chunk chunks[] = {{{8 * MiB}, 2 * MiB}, {{10 * MiB}, 2 * MiB}, {{40 * MiB}, 12 * KiB}, {{1 * MiB}, 4 * KiB}};
  r.pt.map(va_base + 64 * MiB, chunks, {});
  const auto w = r.walk();
  CHECK(w.problems.empty());
  REQUIRE(w.leaves.size() == 2 + 3 + 1);
  CHECK(w.leaves[0].fragment == 10);  // 8 MiB + 10 MiB joined: one 4 MiB-aligned, 4 MiB block
  CHECK(w.leaves[2].fragment == 1);   // 12 KiB = an 8 KiB block + a 4 KiB block
  CHECK(w.leaves[3].fragment == 1);
  CHECK(w.leaves[4].fragment == 0);
  CHECK(runs_of(w) == std::vector<run>{{va_base.value + 64 * MiB, 4 * MiB, 8 * MiB, {}},
                                       {va_base.value + 68 * MiB, 12 * KiB, 40 * MiB, {}},
                                       {va_base.value + 68 * MiB + 12 * KiB, 4 * KiB, 1 * MiB, {}}});
  CHECK(fragment_problems(w) == "");
}

TEST_CASE("system pages are snooped, and uncached and access bits reach the leaf") {
  for (gfx_gen gen : both_gens) {
    page_table_rig r(gen);
    const page_flags host{page_location::system, true, true, true, false, false};
    r.pt.map(va_base, phys_chunk{{0x8'1234'5000}, 8 * KiB}, host);
    const auto w = r.walk();
    REQUIRE(w.leaves.size() == 2);
    CHECK(w.leaves[0].system);
    CHECK(w.leaves[0].snooped);
    CHECK(w.leaves[0].mtype == 3);
    CHECK(w.leaves[0].readable);
    CHECK_FALSE(w.leaves[0].writable);
    CHECK_FALSE(w.leaves[0].executable);
    CHECK(flags_of(w.leaves[1]) == host);
  }
}

TEST_CASE("unmap clears the entries and frees the tables that became empty") {
  for (gfx_gen gen : both_gens) {
    page_table_rig r(gen);
    const std::uint64_t free_at_start = r.pool.free_bytes();
    r.pt.map(va_base + 4 * KiB, phys_chunk{{1 * MiB}, 8 * KiB}, {});
    r.pt.map(va_base + 1 * GiB + 2 * MiB, phys_chunk{{4 * MiB}, 2 * MiB}, {});
    CHECK(r.pt.table_count() == 5);  // root, PDB1, two PDB0, one PTB
    r.pt.unmap(va_base + 4 * KiB, 8 * KiB);
    CHECK(r.pt.table_count() == 3);
    CHECK(r.walk().leaves.size() == 1);
    r.pt.unmap(va_base + 1 * GiB + 2 * MiB, 2 * MiB);
    CHECK(r.pt.table_count() == 1);
    CHECK(r.pool.free_bytes() == free_at_start);
    const auto w = r.walk();
    CHECK(w.leaves.empty());
    CHECK(w.table_count == 1);
    CHECK(r.tlb.calls == 4);
    CHECK(r.tlb.last_first == va_base + 1 * GiB + 2 * MiB);
    CHECK(r.pool.state().find_inconsistency() == "");
  }
}

TEST_CASE("remap switches a range between 4 KiB pages and a 2 MiB leaf in place") {
  for (gfx_gen gen : both_gens) {
    page_table_rig r(gen);
    const gpu_va va = va_base + 2 * MiB;
    r.pt.map(va, phys_chunk{{2 * MiB + 4 * KiB}, 2 * MiB}, {});
    CHECK(r.pt.table_count() == 4);
    r.pt.remap(va, phys_chunk{{16 * MiB}, 2 * MiB}, {page_location::vram, false, true, true, true, false});
    CHECK(r.pt.table_count() == 3);  // the PTB gave way to a PDB0 leaf
    auto w = r.walk();
    REQUIRE(w.leaves.size() == 1);
    CHECK(w.leaves[0].level == 2);
    CHECK(w.leaves[0].pa == gpu_pa{16 * MiB});
    CHECK(w.leaves[0].mtype == 3);
    CHECK_FALSE(w.leaves[0].executable);
    r.pt.remap(va, phys_chunk{{2 * MiB + 4 * KiB}, 2 * MiB}, {});
    CHECK(r.pt.table_count() == 4);
    w = r.walk();
    CHECK(w.leaves.size() == 512);
    CHECK(runs_of(w) == std::vector<run>{{va.value, 2 * MiB, 2 * MiB + 4 * KiB, {}}});
    CHECK(r.tlb.calls == 3);
  }
}

TEST_CASE("mapping over a mapped page is a usage error that changes nothing") {
  page_table_rig r(gfx_gen::gfx11);
  r.pt.map(va_base + 128 * KiB, phys_chunk{{0}, 64 * KiB}, {});
  const auto writes = r.vram.write_calls();
  const auto free_before = r.pool.free_bytes();
  CHECK_THROWS_WITH_AS(r.pt.map(va_base + 64 * KiB, phys_chunk{{0}, 128 * KiB}, {}),
                       "map [0x200000010000, 0x200000030000): 0x200000020000 is already mapped (unmap it first, or "
                       "remap)",
                       tg::usage_error);
  CHECK(r.vram.write_calls() == writes);
  CHECK(r.pool.free_bytes() == free_before);
  CHECK(r.tlb.calls == 1);
}

TEST_CASE("unmapping a range that is not fully mapped names the range and the hole") {
  page_table_rig r(gfx_gen::gfx12);
  r.pt.map(va_base, phys_chunk{{0}, 64 * KiB}, {});
  const auto writes = r.vram.write_calls();
  CHECK_THROWS_WITH_AS(r.pt.unmap(va_base, 128 * KiB),
                       "unmap [0x200000000000, 0x200000020000): 0x200000010000 is not mapped (unmapped twice, or not "
                       "the range that was mapped?)",
                       tg::usage_error);
  CHECK(r.walk().leaves.size() == 16);
  r.pt.unmap(va_base, 64 * KiB);
  CHECK_THROWS_WITH_AS(r.pt.unmap(va_base, 64 * KiB),
                       "unmap [0x200000000000, 0x200000010000): 0x200000000000 is not mapped (unmapped twice, or not "
                       "the range that was mapped?)",
                       tg::usage_error);
  CHECK_THROWS_WITH_AS(r.pt.remap(va_base + 1 * GiB, phys_chunk{{0}, 4 * KiB}, {}),
                       "remap [0x200040000000, 0x200040001000): 0x200040000000 is not mapped (unmapped twice, or not "
                       "the range that was mapped?)",
                       tg::usage_error);
  CHECK(r.vram.write_calls() == writes + 1);  // the successful unmap: only the root entry (tables below were freed)
  CHECK(r.tlb.calls == 2);
}

TEST_CASE("unmapping a page inside a fragment shrinks the claims of the pages left around it") {
  for (gfx_gen gen : both_gens) {
    page_table_rig r(gen);
    const gpu_va va = va_base + 64 * KiB;
    r.pt.map(va, phys_chunk{{64 * KiB}, 64 * KiB}, {});
    r.pt.unmap(va + 16 * KiB, 4 * KiB);
    const auto w = r.walk();
    CHECK(fragment_problems(w) == "");
    REQUIRE(w.leaves.size() == 15);
    // Pages 0-3 keep [0, 16 KiB), page 5 only itself, 6-7 [24, 32 KiB), 8-15 [32, 64 KiB).
    const unsigned expected[] = {2, 2, 2, 2, 0, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3};
    for (std::size_t i = 0; i < 15; ++i) CHECK(w.leaves[i].fragment == expected[i]);
    // The neighbours changed too, so the invalidation covers them.
    CHECK(r.tlb.last_first == va);
    CHECK(r.tlb.last_size == 64 * KiB);
  }
}

TEST_CASE("unmapping part of a 2 MiB leaf is refused rather than splitting it") {
  page_table_rig r(gfx_gen::gfx11);
  r.pt.map(va_base, phys_chunk{{2 * MiB}, 2 * MiB}, {});
  CHECK_THROWS_WITH_AS(r.pt.unmap(va_base, 4 * KiB),
                       "unmap [0x200000000000, 0x200000001000) cuts the 2 MiB page [0x200000000000, 0x200000200000); "
                       "unmap or remap whole mappings",
                       tg::usage_error);
  CHECK(r.walk().leaves.size() == 1);
}

TEST_CASE("bad addresses, sizes and flags are usage errors") {
  page_table_rig r(gfx_gen::gfx11);
  CHECK_THROWS_WITH_AS(r.pt.map(va_base + 1, phys_chunk{{0}, 4 * KiB}, {}),
                       "map [0x200000000001, 0x200000001001): address and size must be multiples of 4 KiB",
                       tg::usage_error);
  CHECK_THROWS_WITH_AS(r.pt.map(va_base, phys_chunk{{100}, 4 * KiB}, {}),
                       "map at 0x200000000000: chunk 0 (pa 0x64, 4096 bytes) must be non-empty and 4 KiB-aligned",
                       tg::usage_error);
  CHECK_THROWS_WITH_AS(r.pt.map(gpu_va{4096}, phys_chunk{{0}, 4 * KiB}, {}),
                       "map [0x1000, 0x2000) is outside the page table's VA window [0x200000000000, 0x300000000000)",
                       tg::usage_error);
  CHECK_THROWS_WITH_AS(r.pt.map(va_base, phys_chunk{{std::uint64_t{1} << 44}, 4 * KiB}, {}),
                       "map at 0x200000000000: chunk 0 (pa 0x100000000000, 4096 bytes) ends beyond the GPU's 44-bit "
                       "physical address space",
                       tg::usage_error);
  CHECK_THROWS_WITH_AS(r.pt.map(va_base, phys_chunk{{0}, 4 * KiB}, {page_location::vram, true}),
                       "map at 0x200000000000: snooped applies to system memory only", tg::usage_error);
  CHECK_THROWS_WITH_AS(r.pt.unmap(va_base, 0), "unmap at 0x200000000000: size is 0", tg::usage_error);
  CHECK_THROWS_AS(r.pt.map(va_base, std::span<const phys_chunk>{}, {}), tg::usage_error);
  CHECK(r.tlb.calls == 0);
  CHECK(r.pt.table_count() == 1);
}

TEST_CASE("each change writes every touched table once, children before the root") {
  page_table_rig r(gfx_gen::gfx11);
  const auto writes = r.vram.write_calls();
  r.pt.map(va_base + 4 * KiB, phys_chunk{{1 * MiB}, 2 * MiB}, {});
  // Four new tables written whole (PDB1, PDB0 and two PTBs: the range crosses a 2 MiB boundary),
  // then the root's one new entry.
  CHECK(r.vram.write_calls() - writes == 5);
  CHECK(r.vram.words_written() == 512 + 4 * 512 + 1);  // the root at construction, then the map
}

TEST_CASE("new_table_bytes predicts what map takes from the allocator") {
  page_table_rig r(gfx_gen::gfx12);
  const phys_chunk c{{0}, 3 * GiB};
  const std::uint64_t predicted = r.pt.new_table_bytes(va_base + (1 * GiB - 2 * MiB), std::span(&c, 1));
  const std::uint64_t before = r.pool.free_bytes();
  r.pt.map(va_base + (1 * GiB - 2 * MiB), c, {});
  CHECK(before - r.pool.free_bytes() == predicted);
  CHECK(predicted == (1 + 4 + 0) * 4 * KiB);  // PDB1 and four PDB0; 2 MiB leaves need no PTB
  const phys_chunk page{{0}, 4 * KiB};
  CHECK(r.pt.new_table_bytes(va_base + 5 * GiB + 4 * KiB, std::span(&page, 1)) == 2 * 4 * KiB);  // PDB0 + PTB
}

TEST_CASE("destroying the page table returns every table to the allocator") {
  host_vram vram(64 * MiB, vram_garbage);
  vram_allocator pool(gpu_pa{0}, 64 * MiB);
  counting_tlb tlb;
  {
    page_table pt(gfx_gen::gfx12, va_base, va_size, pool, vram, tlb);
    pt.map(va_base, phys_chunk{{0}, 8 * MiB + 4 * KiB}, {});
    CHECK(pool.free_bytes() < 64 * MiB);
  }
  CHECK(pool.state().blocks().size() == 1);
  CHECK(pool.free_bytes() == 64 * MiB);
}
