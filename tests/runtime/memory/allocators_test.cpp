// allocators_test.cpp: the typed VRAM and GPU VA allocators on top of TLSF.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "runtime/memory/va_allocator.hpp"
#include "runtime/memory/vram_allocator.hpp"
#include <tg/core/error.hpp>

using namespace tg::memory;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB, TiB = 1024 * GiB;
constexpr gpu_va reference_va_base{std::uint64_t{1} << 45};  // tinygrad's AMMemoryManager.va_allocator
constexpr std::uint64_t reference_va_size = std::uint64_t{1} << 44;

}  // namespace

TEST_CASE("gpu va allocations are naturally aligned to their size's power of two") {
  va_allocator va(reference_va_base, reference_va_size);
  CHECK(va.allocate(4 * KiB).value % (4 * KiB) == 0);
  CHECK(va.allocate(3 * MiB).value % (2 * MiB) == 0);
  CHECK(va.allocate(5 * GiB).value % (4 * GiB) == 0);
  CHECK(va.allocate(100 * KiB, 4 * KiB).value % (4 * KiB) == 0);  // an explicit alignment wins
  CHECK(va_allocator::effective_align(1, 0) == 4 * KiB);
  CHECK(va_allocator::effective_align(6 * MiB, 0) == 4 * MiB);
  CHECK(va.state().find_inconsistency() == "");
}

TEST_CASE("the va window runs out with a device_error naming the request") {
  va_allocator va(reference_va_base, 1 * TiB);
  const gpu_va big = va.allocate(512 * GiB);
  CHECK(big.value % (512 * GiB) == 0);
  CHECK_THROWS_WITH_AS(va.allocate(1 * TiB), "gpu va: out of space: cannot allocate 1099511627776 bytes aligned to "
                                             "1099511627776 (549755813888 of 1099511627776 bytes free, largest free "
                                             "block 549755813888 bytes)",
                       tg::device_error);
  va.free(big);
  CHECK(va.allocate(1 * TiB) == reference_va_base);
}

TEST_CASE("random va allocations never overlap and free back to one block") {
  va_allocator va(reference_va_base, reference_va_size);
  std::mt19937_64 rng(7);
  std::vector<std::pair<gpu_va, std::uint64_t>> live;
  for (int op = 0; op < 5000; ++op) {
    if (live.empty() || rng() % 3 != 0) {
      const std::uint64_t size = (1 + rng() % 4096) * 4 * KiB << (rng() % 8);
      const gpu_va at = va.allocate(size);
      REQUIRE(at.value % va_allocator::effective_align(size, 0) == 0);
      REQUIRE(at >= reference_va_base);
      REQUIRE(at.value + size <= reference_va_base.value + reference_va_size);
      live.emplace_back(at, size);
    } else {
      const std::size_t k = rng() % live.size();
      va.free(live[k].first);
      live.erase(live.begin() + std::ptrdiff_t(k));
    }
  }
  std::sort(live.begin(), live.end());
  for (std::size_t i = 1; i < live.size(); ++i) REQUIRE(live[i - 1].first.value + live[i - 1].second <= live[i].first.value);
  CHECK(va.state().find_inconsistency() == "");
  for (auto& [at, size] : live) va.free(at);
  CHECK(va.state().blocks().size() == 1);
}

TEST_CASE("vram allocations are typed physical addresses and report exhaustion") {
  vram_allocator vram(gpu_pa{32 * MiB}, 16 * MiB);
  const gpu_pa a = vram.allocate(2 * MiB, 2 * MiB);
  CHECK(a == gpu_pa{32 * MiB});
  CHECK(vram.try_allocate(15 * MiB) == std::nullopt);
  CHECK_THROWS_AS(vram.allocate(15 * MiB), tg::device_error);
  vram.free(a);
  CHECK_THROWS_AS(vram.free(a), tg::usage_error);
  CHECK(vram.free_bytes() == 16 * MiB);
}
