// nv_beam_device_test.cpp: TG_BEAM on an NV device, as a user turns it on (TG_BEAM=2, TG_CACHE),
// on the stand-in driver (fake_libcuda.cpp, FAKE_CUDA_TIMING=threads; meson sets both): the first
// launch of a matvec searches through the NV tuner (drivers/nv/nv_tuning.cpp) in the worker,
// stores the winner under the card's target, and a second device of that card launches it
// without searching.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include "drivers/nv/nv_candidate_runner.hpp"
#include "runtime/tune/tuned_compile.hpp"
#include "runtime/tune/tuning_cache.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace fs = std::filesystem;

TEST_CASE("TG_BEAM on NV searches in the worker, caches under the card's target, and a second device uses it") {
  std::string folder = (fs::temp_directory_path() / "tg_nv_beam_XXXXXX").string();
  REQUIRE(mkdtemp(folder.data()) != nullptr);
  const std::string path = folder + "/tuning.db";
  setenv("TG_CACHE", path.c_str(), 1);  // before the first kernel compiles: read once per process
  setenv("TG_BEAM", "2", 1);
  constexpr std::int64_t rows = 128, cols = 256;
  tg::kernel_builder kb;
  auto i = kb.output_range(rows);
  auto r = kb.reduce_range(cols);
  kb.store(0, i, kb.sum(kb.load<float>(1, i * cols + r) * kb.load<float>(2, r), r));
  const tg::ast::kernel kernel = kb.finish();
  std::string target;
  {
    tg::device card("NV");
    target = tg::nv::nv_tuning_target(dynamic_cast<tg::nv::nv_backend&>(card.impl()));
    (void)tune_test::run_matmul(card, kernel, rows, 1, cols);  // the stand-in computes nothing: the search is what counts
  }
  CHECK(tg::tune::stats().searches == 1);
  tg::tune::tuning_cache cache(path, tg::tune::tuning_cache::access::read_only);
  REQUIRE(cache.entries().size() == 1);
  CHECK(cache.entries()[0].key.target == target);
  CHECK(cache.entries()[0].opts.find("group=") != std::string::npos);  // a GPU schedule
  MESSAGE("cached for " << target << ": " << cache.entries()[0].opts << " (" << cache.entries()[0].seconds * 1e6
                        << " us by the stand-in's clock)");
  {
    tg::device again("NV");
    (void)tune_test::run_matmul(again, kernel, rows, 1, cols);
  }
  CHECK(tg::tune::stats().searches == 1);
  CHECK(tg::tune::stats().cache_hits == 1);
  fs::remove_all(folder);
}
