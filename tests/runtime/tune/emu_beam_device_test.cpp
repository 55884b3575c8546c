// emu_beam_device_test.cpp: BEAM through an AMD:EMU device, as a user turns it on (TG_BEAM=2,
// TG_CACHE): the first launch of a matvec searches GPU schedules on the runner's own emulated GPU
// and stores the winner under the emulated target; a later gfx1100 device compiles the cached
// schedule without searching, and a gfx1201 device (another target) is not served it.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include "drivers/emu/emu_candidate_runner.hpp"
#include "runtime/tune/ast_hash.hpp"
#include "runtime/tune/tuned_compile.hpp"
#include "runtime/tune/tuning_cache.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::int64_t rows = 256, cols = 512;


}  // namespace

TEST_CASE("TG_BEAM on AMD:EMU searches once, caches under the emulated target, and serves that target only") {
  std::string folder = (fs::temp_directory_path() / "tg_emu_beam_XXXXXX").string();
  REQUIRE(mkdtemp(folder.data()) != nullptr);
  const std::string path = folder + "/tuning.db";
  setenv("TG_CACHE", path.c_str(), 1);  // before the first kernel compiles: read once per process
  setenv("TG_BEAM", "2", 1);
  tg::kernel_builder kb;
  auto i = kb.output_range(rows);
  auto r = kb.reduce_range(cols);
  kb.store(0, i, kb.sum(kb.load<float>(1, i * cols + r) * kb.load<float>(2, r), r));
  const tg::ast::kernel kernel = kb.finish();
  const auto want = tune_test::reference_matmul(tune_test::pattern(rows * cols, 1), tune_test::pattern(cols, 2), rows, 1, cols);
  tune_test::log_capture logged;
  {
    tg::device dev("AMD:EMU:gfx1100:usb");  // the runner's GPU is its own, on PCI: the bridge carries no candidate
    CHECK(tune_test::run_matmul(dev, kernel, rows, 1, cols) == want);
  }
  CHECK(tg::tune::stats().searches == 1);
  CHECK(logged.count("beam: r_256_512: round 1, ") == 1);
  tg::tune::tuning_cache cache(path, tg::tune::tuning_cache::access::read_only);
  REQUIRE(cache.entries().size() == 1);
  CHECK(cache.entries()[0].key.ast == tg::tune::ast_hash(kernel.nodes, kernel.global_ranges));
  CHECK(cache.entries()[0].key.target == "AMD:EMU gfx1100 modeled RX 7900 XTX");
  CHECK(cache.entries()[0].opts.find("group=") != std::string::npos);  // a GPU schedule
  MESSAGE("cached: " << cache.entries()[0].opts << " (" << cache.entries()[0].seconds * 1e6 << " us modeled)");
  {
    tg::device again("AMD:EMU:gfx1100");
    CHECK(tune_test::run_matmul(again, kernel, rows, 1, cols) == want);
  }
  CHECK(tg::tune::stats().searches == 1);
  CHECK(tg::tune::stats().cache_hits == 1);
  {
    tg::device other("AMD:EMU:gfx1201");  // another target: searched for itself
    CHECK(tune_test::run_matmul(other, kernel, rows, 1, cols) == want);
  }
  CHECK(tg::tune::stats().searches == 2);
  CHECK(tg::tune::stats().cache_hits == 1);
  tg::tune::tuning_cache after(path, tg::tune::tuning_cache::access::read_only);
  CHECK(after.entries().size() == 2);
  fs::remove_all(folder);
}
