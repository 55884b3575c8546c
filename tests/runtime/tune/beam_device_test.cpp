// beam_device_test.cpp: BEAM through the device, as a user turns it on (TG_BEAM=2, TG_CACHE): the
// first device to run a 256x256 matmul searches at its first launch and stores the winner; a new
// device (as a second run would) compiles the cached shape without searching. Both compute it.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include "runtime/tune/ast_hash.hpp"
#include "runtime/tune/tuned_compile.hpp"
#include "runtime/tune/tuning_cache.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace fs = std::filesystem;

TEST_CASE("TG_BEAM searches a kernel once, and the tuning cache serves a later device") {
  std::string folder = (fs::temp_directory_path() / "tg_beam_XXXXXX").string();
  REQUIRE(mkdtemp(folder.data()) != nullptr);
  const std::string path = folder + "/tuning.db";
  // Before the first kernel compiles: the settings are read once per process.
  setenv("TG_CACHE", path.c_str(), 1);
  setenv("TG_BEAM", "2", 1);
  constexpr std::int64_t size = 256;
  const tg::ast::kernel kernel = tune_test::matmul(size, size, size);
  const auto want = tune_test::reference_matmul(tune_test::pattern(size * size, 1), tune_test::pattern(size * size, 2),
                                                size, size, size);
  tune_test::log_capture logged;
  {
    tg::device dev("CPU");
    const auto start = std::chrono::steady_clock::now();
    CHECK(tune_test::run_matmul(dev, kernel, size, size, size) == want);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE("BEAM (width 2) on r_256_256_256, compile and search included: " << took << " s");
  }
  CHECK(tg::tune::stats().searches == 1);
  CHECK(logged.count("beam: r_256_256_256: round 1, ") == 1);
  {
    tg::device again("CPU");  // a fresh kernel cache: it compiles the kernel anew
    CHECK(tune_test::run_matmul(again, kernel, size, size, size) == want);
  }
  CHECK(tg::tune::stats().searches == 1);
  CHECK(tg::tune::stats().cache_hits == 1);
  tg::tune::tuning_cache cache(path, tg::tune::tuning_cache::access::read_only);
  REQUIRE(cache.entries().size() == 1);
  CHECK(cache.entries()[0].key.ast == tg::tune::ast_hash(kernel.nodes, kernel.global_ranges));
  CHECK(cache.entries()[0].key.target.starts_with("CPU "));
  MESSAGE("cached: " << cache.entries()[0].opts << " for " << cache.entries()[0].key.target);
  SUBCASE("resolve_tuned gives the backend's program behind a searching one, searching first") {
    tg::device dev("CPU");
    const tg::ast::kernel small = tune_test::matmul(32, 32, 32);
    std::shared_ptr<tg::program> compiled = dev.compile({small.nodes, small.global_ranges, "r_32_32_32"});
    std::shared_ptr<tg::program> resolved = tg::tune::resolve_tuned(compiled, {});
    CHECK(resolved != compiled);
    CHECK(tg::tune::stats().searches == 2);
    CHECK(tg::tune::resolve_tuned(compiled, {}) == resolved);  // searched once
    CHECK(tg::tune::resolve_tuned(resolved, {}) == resolved);
  }
  fs::remove_all(folder);
}
