// nv_beam_test.cpp: BEAM for an NVIDIA GPU (drivers/nv/nv_candidate_runner.hpp) on the stand-in
// driver (fake_libcuda.cpp; TG_LIBCUDA and FAKE_CUDA_TIMING=threads are set by meson, and the
// worker it starts, tg-nv-worker from the build tree, loads the same stand-in). Candidates planted
// to fault the GPU, hang it, crash the worker and compute a wrong result are skipped, the first
// three costing the worker they ran in; the fastest of the rest is kept; the user's own device in this process,
// whose stand-in would keep a fault as the real driver does, never sees any of it.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <tg/device.hpp>
#include <tg/tg.hpp>

#include "drivers/nv/nv_backend.hpp"
#include "drivers/nv/nv_candidate_runner.hpp"
#include "drivers/nv/nv_worker_protocol.hpp"
#include "runtime/tune/opts_text.hpp"
#include "tests/runtime/tune/planted_gpu_candidates.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace {

tg::kernel_source source_of(const tg::ast::kernel& kernel) {
  return {kernel.nodes, kernel.global_ranges, tg::kernel_name(kernel.nodes, kernel.global_ranges)};
}

int parent_sticky_error() {
  void* lib = dlopen(std::getenv("TG_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(lib != nullptr);
  auto sticky = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_sticky_error"));
  REQUIRE(reinterpret_cast<void*>(sticky) != nullptr);
  return sticky();
}

}  // namespace

TEST_CASE("BEAM on NV runs candidates in a worker: a fault, a hang, a crash and a wrong result are skipped, the user's device lives on") {
  tg::device dev("NV");
  auto& nv = dynamic_cast<tg::nv::nv_backend&>(dev.impl());
  CHECK(tg::nv::nv_tuning_target(nv) == "NV Fake GPU sm_90 132 SMs");
  tg::buffer kept = dev.allocate(256);  // the user's data, made before the search
  std::vector<float> mine(64);
  for (int i = 0; i < 64; ++i) mine[std::size_t(i)] = float(i) * 0.5f;
  kept.copy_in(mine.data(), 256);

  constexpr std::int64_t n = 64;
  const tg::ast::kernel kernel = tune_test::matmul(n, n, n);
  const tg::kernel_source source = source_of(kernel);
  tg::nv::nv_candidate_runner on_worker(nv);
  tune_test::planting_runner runner(on_worker);
  const tg::tune::beam_result found = tune_test::search_past_planted(runner, source, kernel.slot_count);
  MESSAGE("default " << found.default_seconds * 1e6 << " us, best " << tg::tune::to_text(found.best) << " "
                     << found.best_seconds * 1e6 << " us (the stand-in's 1 us per 256 threads), " << found.tried
                     << " tried, " << on_worker.worker_starts() << " workers");
  // The fault and the hang each ended the worker they ran in, and the next candidate started
  // another; the wrong result did not.
  CHECK(on_worker.worker_starts() == 3);

  // A second search, with a candidate that crashes the worker process itself.
  const auto first = runner.normalize(runner.default_opts(source), source);
  runner.faults = runner.hangs = {};
  runner.crashes = runner.neighbours(first, source).at(0);
  {
    tune_test::log_capture logged;
    const auto again = tune_test::search_logging_skips(runner, source, kernel.slot_count, {.width = 2});
    REQUIRE(again.has_value());
    CHECK(again->skipped == 1);
    CHECK(again->best != runner.crashes);
    CHECK(logged.count(tg::tune::to_text(runner.crashes) + " skipped: the BEAM worker died: signal 11") == 1);
    CHECK(again->best_seconds == found.best_seconds);  // the same clock, as fast a winner
  }
  CHECK(on_worker.worker_starts() == 4);

  // Timed on the GPU's clock (the stand-in's: fewer threads for the same outputs are faster).
  CHECK_FALSE(found.is_default);
  CHECK(found.best_seconds < found.default_seconds);
  CHECK(found.best_seconds > 0);

  // Nothing of it reached this process's context: no sticky fault, the user's buffer intact, and
  // its kernels still launch.
  CHECK(parent_sticky_error() == 0);
  std::vector<float> back(64);
  kept.copy_out(back.data(), 256);
  CHECK(back == mine);
  constexpr auto x = tg::input<float>("x", tg::dims<1000>);
  CHECK_NOTHROW((void)dev.run(tg::lower(x * 2.0f), {{"x", std::vector<float>(1000, 1.0f)}}));
  // A candidate is PTX for the worker, never a program of this device.
  auto candidate = on_worker.compile(source);
  std::vector<void*> none;
  CHECK_THROWS_WITH_AS(candidate->launch(none, {}), doctest::Contains("runs in the BEAM worker"), tg::usage_error);
}

TEST_CASE("without its worker program, or with a worker that finds no GPU, the NV runner says which") {
  tg::device dev("NV");
  auto& nv = dynamic_cast<tg::nv::nv_backend&>(dev.impl());
  const tg::ast::kernel kernel = tune_test::matmul(8, 8, 8);
  SUBCASE("no program where TG_NV_WORKER points") {
    setenv("TG_NV_WORKER", "/nonexistent/tg-nv-worker", 1);
    tg::nv::nv_candidate_runner runner(nv);
    CHECK_FALSE(tg::tune::beam_search(runner, source_of(kernel), kernel.slot_count, {}, {}).has_value());
    const std::vector<tg::tune::slot_info> slots{{tg::dtype::float32, 256, true}};
    const std::vector<std::vector<std::byte>> inputs{std::vector<std::byte>(256)};
    tg::tune::trial_setup setup{slots, &inputs, {}};
    auto candidate = runner.compile(source_of(kernel));
    CHECK_THROWS_WITH_AS(runner.run(*candidate, {}, setup),
                         doctest::Contains("cannot start the BEAM worker /nonexistent/tg-nv-worker"), tg::device_error);
    unsetenv("TG_NV_WORKER");
  }
  SUBCASE("the worker's own driver finds no GPU: its message comes back") {
    setenv("FAKE_CUDA_MODE", "no_device", 1);  // this process's driver is loaded already; the worker's is not
    tg::nv::nv_candidate_runner runner(nv);
    const std::vector<tg::tune::slot_info> slots{{tg::dtype::float32, 256, true}};
    const std::vector<std::vector<std::byte>> inputs{std::vector<std::byte>(256)};
    tg::tune::trial_setup setup{slots, &inputs, {}};
    auto candidate = runner.compile(source_of(kernel));
    CHECK_THROWS_WITH_AS(runner.run(*candidate, {}, setup), doctest::Contains("no CUDA-capable device is detected"),
                         tg::device_error);
    unsetenv("FAKE_CUDA_MODE");
  }
}

TEST_CASE("the worker's messages round-trip, and one cut short is an error, never a read past its end") {
  namespace w = tg::nv::worker;
  w::message_writer m;
  m.u8(7).u32(40000).u64(std::uint64_t(1) << 40).f64(2.5).text("sm_90 PTX");
  w::message_reader in(m.data);
  CHECK(in.u8() == 7);
  CHECK(in.u32() == 40000);
  CHECK(in.u64() == std::uint64_t(1) << 40);
  CHECK(in.f64() == 2.5);
  CHECK(in.text() == "sm_90 PTX");
  CHECK_THROWS_WITH(in.u8(), doctest::Contains("malformed message from the NV worker"));
  std::vector<std::byte> cut(m.data.begin(), m.data.end() - 3);  // the text's last bytes missing
  w::message_reader short_one(cut);
  (void)short_one.u8(), (void)short_one.u32(), (void)short_one.u64(), (void)short_one.f64();
  CHECK_THROWS_WITH(short_one.text(), doctest::Contains("a field longer than the message"));
}
