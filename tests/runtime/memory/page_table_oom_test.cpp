// page_table_oom_test.cpp: page-table memory runs out: every failing map or remap leaves the
// tables, VRAM and the allocator exactly as they were; smaller requests still succeed.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "tests/runtime/memory/page_table_rig.hpp"
#include <tg/core/error.hpp>

using namespace tg::memory;
using namespace tg::memory::test;

namespace {

// Everything a failed call must leave alone.
struct snapshot {
  explicit snapshot(page_table_rig& r)
      : blocks(r.pool.state().blocks()),
        writes(r.vram.write_calls()),
        tlb_calls(r.tlb.calls),
        tables(r.pt.table_count()),
        runs(runs_of(r.walk())) {}
  bool operator==(const snapshot&) const = default;
  std::vector<tlsf_block> blocks;
  std::uint64_t writes, tlb_calls;
  std::size_t tables;
  std::vector<run> runs;
};

// Fills the pool with data allocations of random sizes until only free_target bytes are left.
std::vector<gpu_pa> fill_vram(page_table_rig& r, std::uint64_t free_target, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<gpu_pa> data;
  while (r.pool.free_bytes() > free_target) {
    const std::uint64_t want = std::min((1 + rng() % 64) * 4 * KiB, r.pool.free_bytes() - free_target);
    data.push_back(r.pool.allocate(want));
  }
  return data;
}

// Tries a map; returns whether it succeeded. A failure must be a device_error that changed nothing.
bool try_map(page_table_rig& r, gpu_va va, phys_chunk c, page_flags f, mapping_model& model) {
  const snapshot before(r);
  try {
    r.pt.map(va, c, f);
  } catch (const tg::device_error&) {
    REQUIRE(snapshot(r) == before);
    return false;
  }
  model.insert(va.value, std::span(&c, 1), f);
  REQUIRE(runs_of(r.walk()) == model.runs());
  REQUIRE(r.tlb.calls == before.tlb_calls + 1);
  return true;
}

}  // namespace

TEST_CASE("with VRAM 99% full, maps fail cleanly when tables don't fit and still succeed when they do") {
  for (gfx_gen gen : {gfx_gen::gfx11, gfx_gen::gfx12}) {
    CAPTURE(gen);
    page_table_rig r(gen, 64 * MiB);
    const std::uint64_t one_percent = (64 * MiB / 100) & ~(4 * KiB - 1);
    fill_vram(r, one_percent, 11);
    const snapshot full(r);
    mapping_model model;

    // Each map lands in a new 1 GiB region: a new PDB0 and PTB (and a PDB1 every 512 GiB).
    int maps = 0, failures = 0;
    for (std::uint64_t k = 0; failures < 3; ++k) {
      const gpu_va va = va_base + k * (1 * GiB + 64 * KiB);
      if (try_map(r, va, {{k * 64 * KiB}, 64 * KiB}, {}, model)) ++maps;
      else ++failures;
    }
    const std::uint64_t pages = one_percent / (4 * KiB);
    CHECK(maps == int(1 + (pages - 3) / 2));  // 3 tables for the first (with the PDB1), then 2 each
    CHECK(r.pool.free_bytes() < 8 * KiB);

    // A new 2 MiB region in an existing PDB0 needs one PTB.
    bool one_table_fits = r.pool.free_bytes() == 4 * KiB;
    CHECK(try_map(r, va_base + 8 * MiB, {{0}, 4 * KiB}, {}, model) == one_table_fits);
    CHECK(r.pool.free_bytes() == 0);
    CHECK_FALSE(try_map(r, va_base + 10 * MiB, {{0}, 4 * KiB}, {}, model));

    // With nothing free, maps into existing tables still work: a page in a PTB, a 2 MiB leaf in a PDB0.
    CHECK(try_map(r, va_base + 512 * KiB, {{1 * MiB}, 64 * KiB}, {}, model));
    CHECK(try_map(r, va_base + 2 * MiB, {{4 * MiB}, 2 * MiB}, {}, model));

    // A remap that needs a PTB fails and changes nothing; one that needs none succeeds.
    {
      const snapshot before(r);
      CHECK_THROWS_AS(r.pt.remap(va_base + 2 * MiB, phys_chunk{{4 * MiB + 4 * KiB}, 2 * MiB}, {}), tg::device_error);
      CHECK(snapshot(r) == before);
      const page_flags uc{page_location::vram, false, true};
      r.pt.remap(va_base + 2 * MiB, phys_chunk{{6 * MiB}, 2 * MiB}, uc);
      model.erase(va_base.value + 2 * MiB, 2 * MiB);
      const phys_chunk c{{6 * MiB}, 2 * MiB};
      model.insert(va_base.value + 2 * MiB, std::span(&c, 1), uc);
      CHECK(runs_of(r.walk()) == model.runs());
    }

    // Unmapping everything gives every table back: the allocator is as it was when VRAM was filled.
    for (const run& x : model.runs()) r.pt.unmap(gpu_va{x.va}, x.size);
    CHECK(r.pt.table_count() == 1);
    CHECK(r.pool.state().blocks() == full.blocks);
    CHECK(r.walk().leaves.empty());
  }
}

TEST_CASE("a map that needs more tables than are free takes none of them and says why") {
  page_table_rig r(gfx_gen::gfx11, 1 * MiB);
  const auto data = fill_vram(r, 3 * 4 * KiB, 5);
  mapping_model model;
  // [2 MiB - 4 KiB, 6 MiB + 4 KiB) touches four 2 MiB regions of one PDB0: PDB1 + PDB0 + 4 PTBs.
  const gpu_va va = va_base + (2 * MiB - 4 * KiB);
  const phys_chunk c{{4 * KiB}, 4 * MiB + 8 * KiB};
  CHECK(r.pt.new_table_bytes(va, std::span(&c, 1)) == 6 * 4 * KiB);
  const snapshot before(r);
  CHECK_THROWS_WITH_AS(r.pt.map(va, c, {}),
                       "page tables: map [0x2000001ff000, 0x200000601000) needs 6 new page tables (24576 bytes of "
                       "VRAM) but the allocator has 12288 bytes free (largest block 12288); nothing was changed "
                       "(free VRAM or give the page tables a larger pool)",
                       tg::device_error);
  CHECK(snapshot(r) == before);
  r.pool.free(data.back());  // at least 4 KiB more; free more until 6 pages are there
  for (std::size_t i = data.size() - 1; r.pool.free_bytes() < 6 * 4 * KiB; --i) r.pool.free(data[i - 1]);
  const std::uint64_t spare = r.pool.free_bytes() - 6 * 4 * KiB;
  CHECK(try_map(r, va, c, {}, model));
  CHECK(r.pool.free_bytes() == spare);
  CHECK(r.pt.table_count() == 7);
}
