// tlsf_test.cpp: the TLSF allocator: alignment, split and merge, errors, and random sequences
// checked against a model.
#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>

#include "runtime/memory/tlsf.hpp"
#include <tg/core/error.hpp>

using tg::memory::tlsf;
using tg::memory::tlsf_block;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

}  // namespace

TEST_CASE("a fresh allocator is one free block covering the range") {
  tlsf a("vram", 64 * KiB, 16 * MiB, 4 * KiB);
  CHECK(a.blocks() == std::vector<tlsf_block>{{64 * KiB, 16 * MiB, true}});
  CHECK(a.free_bytes() == 16 * MiB);
  CHECK(a.largest_free_block() == 16 * MiB);
  CHECK(a.find_inconsistency() == "");
}

TEST_CASE("sizes round up to the granule and starts honour the alignment") {
  tlsf a("vram", 0, 16 * MiB, 4 * KiB);
  const auto first = a.allocate(1, 0);
  CHECK(first == 0);
  CHECK(a.allocation_size(first) == 4 * KiB);
  const auto aligned = a.allocate(5 * KiB, 2 * MiB);
  CHECK(aligned % (2 * MiB) == 0);
  CHECK(a.allocation_size(aligned) == 8 * KiB);
  // The gap before the aligned block stays free and usable.
  const auto small = a.allocate(4 * KiB, 0);
  CHECK(small < aligned);
  CHECK(a.used_bytes() == 16 * KiB);
  CHECK(a.find_inconsistency() == "");
}

TEST_CASE("freeing everything merges back into one block, whatever the order") {
  tlsf a("vram", 0, 8 * MiB, 4 * KiB);
  std::vector<std::uint64_t> at;
  for (std::uint64_t i = 0; i < 64; ++i) at.push_back(a.allocate((i % 7 + 1) * 4 * KiB, i % 3 ? 0 : 64 * KiB));
  for (std::size_t i = 0; i < at.size(); i += 2) a.free(at[i]);  // holes between live blocks
  CHECK(a.find_inconsistency() == "");
  for (std::size_t i = 1; i < at.size(); i += 2) a.free(at[i]);
  CHECK(a.blocks() == std::vector<tlsf_block>{{0, 8 * MiB, true}});
  CHECK(a.allocation_count() == 0);
}

TEST_CASE("running out is a device_error that names the request and the free space") {
  tlsf a("vram", 0, 1 * MiB, 4 * KiB);
  CHECK_THROWS_WITH_AS(a.allocate(2 * MiB, 0),
                       "vram: out of space: cannot allocate 2097152 bytes aligned to 4096 (1048576 of 1048576 "
                       "bytes free, largest free block 1048576 bytes)",
                       tg::device_error);
  CHECK_FALSE(a.try_allocate(2 * MiB, 0).has_value());
  CHECK(a.blocks().size() == 1);
}

TEST_CASE("fragmentation: free space in small holes cannot serve a larger request until it merges") {
  tlsf a("vram", 0, 16 * MiB, 4 * KiB);
  std::vector<std::uint64_t> at;
  for (int i = 0; i < 4096; ++i) at.push_back(a.allocate(4 * KiB, 0));
  CHECK(a.free_bytes() == 0);
  for (std::size_t i = 0; i < at.size(); i += 2) a.free(at[i]);
  CHECK(a.free_bytes() == 8 * MiB);
  CHECK(a.largest_free_block() == 4 * KiB);
  CHECK_THROWS_WITH_AS(a.allocate(8 * KiB, 0),
                       "vram: out of space: cannot allocate 8192 bytes aligned to 4096 (8388608 of 16777216 bytes "
                       "free, largest free block 4096 bytes)",
                       tg::device_error);
  for (std::size_t i = 1; i < at.size(); i += 2) a.free(at[i]);
  CHECK(a.allocate(16 * MiB, 0) == 0);
}

TEST_CASE("an exactly sized aligned hole is found even when the padded search cannot succeed") {
  tlsf a("vram", 0, 8 * MiB, 4 * KiB);
  std::uint64_t at[4];
  for (auto& x : at) x = a.allocate(2 * MiB, 2 * MiB);
  a.free(at[2]);  // the only free space: [4 MiB, 6 MiB), exactly one aligned 2 MiB block
  CHECK(a.allocate(2 * MiB, 2 * MiB) == 4 * MiB);
}

TEST_CASE("bad requests are usage errors") {
  tlsf a("gpu va", 0, 1 * MiB, 4 * KiB);
  CHECK_THROWS_WITH_AS(a.allocate(0, 0), "gpu va: allocation of 0 bytes", tg::usage_error);
  CHECK_THROWS_WITH_AS(a.allocate(4 * KiB, 3 * KiB), "gpu va: alignment 3072 is not a power of two", tg::usage_error);
  const auto x = a.allocate(4 * KiB, 0);
  a.free(x);
  CHECK_THROWS_WITH_AS(a.free(x), "gpu va: free of 0x0, which is not the start of an allocated block (double free?)",
                       tg::usage_error);
  CHECK_THROWS_AS(tlsf("vram", 0, 5000, 4 * KiB), tg::usage_error);
  CHECK_THROWS_AS(tlsf("vram", 0, 1 * MiB, 3000), tg::usage_error);
}

TEST_CASE("random allocate and free sequences agree with a model of live blocks") {
  for (const std::uint32_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    constexpr std::uint64_t base = 256 * MiB, size = 64 * MiB;
    tlsf a("vram", base, size, 4 * KiB);
    std::map<std::uint64_t, std::uint64_t> live;  // start -> size in bytes (rounded)
    std::mt19937_64 rng(seed);
    std::uint64_t failures = 0;
    for (int op = 0; op < 20000; ++op) {
      if (live.empty() || rng() % 100 < 55) {
        const std::uint64_t want = rng() % 8 == 0 ? 1 + rng() % (4 * MiB) : 1 + rng() % (64 * KiB);
        const std::uint64_t align = rng() % 4 == 0 ? std::uint64_t{4096} << (rng() % 10) : 0;
        const auto at = a.try_allocate(want, align);
        if (!at) {
          ++failures;
          continue;
        }
        const std::uint64_t got = a.allocation_size(*at);
        REQUIRE(got == (want + 4095) / 4096 * 4096);
        REQUIRE(*at >= base);
        REQUIRE(*at + got <= base + size);
        REQUIRE(*at % (align ? align : 4096) == 0);
        auto next = live.lower_bound(*at);
        if (next != live.end()) REQUIRE(*at + got <= next->first);
        if (next != live.begin()) REQUIRE(std::prev(next)->first + std::prev(next)->second <= *at);
        live.emplace(*at, got);
      } else {
        auto it = live.begin();
        std::advance(it, rng() % live.size());
        a.free(it->first);
        live.erase(it);
      }
      if (op % 1000 == 0) REQUIRE(a.find_inconsistency() == "");
      std::uint64_t used = 0;
      for (const auto& [s, n] : live) used += n;
      REQUIRE(a.used_bytes() == used);
    }
    CHECK(failures > 0);  // the sizes above do fill 64 MiB: exhaustion was exercised
    CHECK(a.find_inconsistency() == "");
    std::vector<std::uint64_t> order;
    for (const auto& [s, n] : live) order.push_back(s);
    std::shuffle(order.begin(), order.end(), rng);
    for (auto s : order) a.free(s);
    CHECK(a.blocks() == std::vector<tlsf_block>{{base, size, true}});
  }
}
