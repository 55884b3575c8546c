// page_table_stress_test.cpp: thousands of random maps, unmaps and remaps (good and bad) on gfx11
// and gfx12; after every one the walker's reading of VRAM must equal the model.
#include <doctest/doctest.h>

#include <iterator>
#include <random>

#include "tests/runtime/memory/page_table_rig.hpp"
#include <tg/core/error.hpp>

using namespace tg::memory;
using namespace tg::memory::test;

namespace {

constexpr std::uint64_t window = 8 * GiB;  // most traffic lands here, so tables are shared and freed

struct random_ops {
  explicit random_ops(std::uint32_t seed) : rng(seed) {}

  std::uint64_t below(std::uint64_t n) { return rng() % n; }

  // A mapping's VA: 4 KiB-, 64 KiB- or 2 MiB-aligned, now and then far away in its own PDB1.
  gpu_va pick_va() {
    const std::uint64_t align = std::uint64_t{4096} << (below(3) == 0 ? 9 : below(2) * 4);
    const std::uint64_t far = below(20) == 0 ? (1 + below(30)) * 512 * GiB : 0;
    return va_base + far + below(window / align) * align;
  }

  // One to three chunks; sizes from one page to a few MiB; PAs aligned like the sizes or not.
  std::vector<phys_chunk> pick_chunks() {
    std::vector<phys_chunk> out;
    const std::uint64_t n = 1 + below(3);
    for (std::uint64_t k = 0; k < n; ++k) {
      std::uint64_t size;
      switch (below(4)) {
        case 0: size = (1 + below(16)) * 4 * KiB; break;
        case 1: size = (1 + below(8)) * 64 * KiB; break;
        case 2: size = (1 + below(3)) * 2 * MiB; break;
        default: size = (1 + below(1024)) * 4 * KiB; break;
      }
      const std::uint64_t pa_align = below(2) ? 2 * MiB : 4 * KiB;
      std::uint64_t pa = below(std::uint64_t{1} << 30) / pa_align * pa_align;
      if (!out.empty() && below(3) == 0) pa = out.back().pa.value + out.back().size_bytes;  // contiguous
      out.push_back({{pa}, size});
    }
    return out;
  }

  page_flags pick_flags() {
    page_flags f;
    f.location = below(4) == 0 ? page_location::system : page_location::vram;
    f.snooped = f.location == page_location::system && below(2);
    f.uncached = below(3) == 0;
    f.readable = below(8) != 0;
    f.writable = below(4) != 0;
    f.executable = below(2);
    return f;
  }

  std::mt19937_64 rng;
};

std::uint64_t total_of(const std::vector<phys_chunk>& chunks) {
  std::uint64_t t = 0;
  for (const auto& c : chunks) t += c.size_bytes;
  return t;
}

// Would [va, va + size) cut a leaf (only 2 MiB leaves can stick out of a page-aligned range)?
bool cuts_a_leaf(const page_table_walk& w, std::uint64_t va, std::uint64_t size) {
  for (const walked_leaf& l : w.leaves) {
    const std::uint64_t a = l.va.value, b = a + l.size_bytes;
    if ((a < va && va < b) || (a < va + size && va + size < b)) return true;
  }
  return false;
}

// pool_bytes: VRAM for page tables; small pools make maps and remaps run out (device_error),
// which must change nothing.
void run_random_ops(gfx_gen gen, std::uint32_t seed, int ops, std::uint64_t pool_bytes) {
  page_table_rig r(gen, pool_bytes);
  random_ops rnd(seed);
  mapping_model model;
  const std::uint64_t free_at_start = r.pool.free_bytes();
  int done[5] = {};  // successful maps, unmaps, remaps; refused calls; of those, out of table memory

  page_table_walk w_before = r.walk();
  for (int op = 0; op < ops; ++op) {
    CAPTURE(op);
    const std::uint64_t tlb_before = r.tlb.calls, writes_before = r.vram.write_calls();
    const std::uint64_t free_before = r.pool.free_bytes();
    bool ok = false, oom = false;
    const bool crowded = model.pieces() > 40;  // then unmap a whole piece
    const std::uint64_t kind = crowded ? 5 : rnd.below(10);
    if (kind < 5) {  // map at a random place: must succeed exactly when the place is free
      gpu_va va = rnd.pick_va();
      auto chunks = rnd.pick_chunks();
      if (model.pieces() > 0 && rnd.below(4) == 0) {  // right behind a mapping, often continuing it physically
        auto it = model.raw().begin();
        std::advance(it, std::ptrdiff_t(rnd.below(model.pieces())));
        va = gpu_va{it->second.va + it->second.size};
        if (rnd.below(2)) chunks[0].pa = gpu_pa{it->second.pa + it->second.size};
      }
      const page_flags f = rnd.pick_flags();
      const bool expect = !model.overlaps(va.value, total_of(chunks));
      const bool fits = r.pt.new_table_bytes(va, chunks) <= free_before;
      try {
        r.pt.map(va, chunks, f);
        ok = true;
        model.insert(va.value, chunks, f);
      } catch (const tg::usage_error&) {
      } catch (const tg::device_error&) {
        oom = true;
      }
      REQUIRE(ok == (expect && fits));
      REQUIRE(oom == (expect && !fits));
      done[0] += ok;
    } else if (kind < 8 && model.pieces() > 0) {  // unmap all or part of a piece, or something wider
      auto it = model.raw().begin();
      std::advance(it, std::ptrdiff_t(rnd.below(model.pieces())));
      std::uint64_t va = it->second.va, size = it->second.size;
      if (!crowded && rnd.below(3) == 0) {  // a page-aligned part of it
        const std::uint64_t lo = rnd.below(size / 4096), hi = lo + 1 + rnd.below(size / 4096 - lo);
        va += lo * 4096;
        size = (hi - lo) * 4096;
      } else if (!crowded && rnd.below(4) == 0) {
        size += 4096 * (1 + rnd.below(4));  // may run past the piece into unmapped VA
      }
      const bool expect = model.covers(va, size) && !cuts_a_leaf(w_before, va, size);
      try {
        r.pt.unmap(gpu_va{va}, size);
        ok = true;
        model.erase(va, size);
      } catch (const tg::usage_error&) {
      }
      REQUIRE(ok == expect);
      done[1] += ok;
    } else if (model.pieces() > 0) {  // remap a piece to new memory and flags
      auto it = model.raw().begin();
      std::advance(it, std::ptrdiff_t(rnd.below(model.pieces())));
      const std::uint64_t va = it->second.va, size = it->second.size;
      const std::uint64_t pa_align = rnd.below(2) ? 2 * MiB : 4 * KiB;
      std::vector<phys_chunk> c{{{rnd.below(std::uint64_t{1} << 30) / pa_align * pa_align}, size}};
      if (size > 4096 && rnd.below(3) == 0) {  // two pieces of memory instead of one
        const std::uint64_t first = (1 + rnd.below(size / 4096 - 1)) * 4096;
        c.push_back({{rnd.below(std::uint64_t{1} << 30) / 4096 * 4096}, size - first});
        c[0].size_bytes = first;
      }
      const page_flags f = rnd.pick_flags();
      const bool expect = !cuts_a_leaf(w_before, va, size);
      const bool fits = r.pt.new_table_bytes(gpu_va{va}, c) <= free_before;  // counted against today's tables
      try {
        r.pt.remap(gpu_va{va}, c, f);
        ok = true;
        model.erase(va, size);
        model.insert(va, c, f);
      } catch (const tg::usage_error&) {
      } catch (const tg::device_error&) {
        oom = true;
      }
      REQUIRE(ok == (expect && fits));
      REQUIRE(oom == (expect && !fits));
      done[2] += ok;
    }
    done[3] += !ok;
    done[4] += oom;

    page_table_walk w = r.walk();
    REQUIRE(w.problems.empty());
    const std::vector<run> runs = runs_of(w);
    REQUIRE(runs == model.runs());
    REQUIRE(fragment_problems(w, runs) == "");
    REQUIRE(w.table_count == r.pt.table_count());
    REQUIRE(r.pool.free_bytes() == free_at_start - (r.pt.table_count() - 1) * 4 * KiB);
    REQUIRE(r.tlb.calls == tlb_before + (ok ? 1 : 0));
    if (!ok) REQUIRE(r.vram.write_calls() == writes_before);
    if (op % 500 == 0) REQUIRE(r.pool.state().find_inconsistency() == "");
    w_before = std::move(w);
  }
  MESSAGE("maps ", done[0], ", unmaps ", done[1], ", remaps ", done[2], ", refused ", done[3], " (out of table memory ",
          done[4], ")");
  CHECK(done[0] > ops / 10);
  CHECK(done[1] > ops / 10);
  CHECK(done[2] > ops / 50);
  CHECK(done[3] > ops / 20);

  for (const run& x : model.runs()) r.pt.unmap(gpu_va{x.va}, x.size);  // whole runs never cut a leaf
  CHECK(r.pt.table_count() == 1);
  CHECK(r.pool.free_bytes() == free_at_start);
  CHECK(r.pool.state().find_inconsistency() == "");
}

}  // namespace

TEST_CASE("random map, unmap and remap keep gfx11 tables equal to the model") {
  run_random_ops(gfx_gen::gfx11, 1, 1500, 256 * MiB);
}

TEST_CASE("random map, unmap and remap keep gfx12 tables equal to the model") {
  run_random_ops(gfx_gen::gfx12, 2, 1500, 256 * MiB);
}

TEST_CASE("random operations with a page-table pool that keeps running out change nothing when they fail") {
  run_random_ops(gfx_gen::gfx11, 3, 600, 40 * 4 * KiB);
  run_random_ops(gfx_gen::gfx12, 4, 600, 40 * 4 * KiB);
}
