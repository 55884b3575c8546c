// nv_llm_ptx_test.cpp: every kernel of the LLM's forward pass (prefill chunks, full and not, decode steps through
// their graph, the output head) for the F32, Q8_0 and Q4_K_M fixtures compiles to PTX that the
// NV device hands to the driver's loader, on the stand-in driver (fake_libcuda.cpp), which refuses
// PTX without an entry or calling an external function as the real JIT would. Nothing runs: this
// checks the code generator's output for NVIDIA GPUs without one; the device check script
// (scripts/device-check.sh) runs the model on a real card.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <tg/device.hpp>

#include "llm/gguf/gguf_file.hpp"
#include "llm/model/transformer.hpp"
#include "tests/support/fixtures.hpp"

TEST_CASE("the LLM's kernels for F32, Q8_0 and Q4_K_M compile to PTX the NV device loads") {
  const char* fake = std::getenv("TG_FAKE_LIBCUDA");
  REQUIRE(fake != nullptr);
  setenv("TG_LIBCUDA", fake, 1);
  tg::device dev("NV");
  void* lib = dlopen(fake, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(lib != nullptr);
  auto module_loads = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_module_loads"));
  REQUIRE(reinterpret_cast<void*>(module_loads) != nullptr);
  for (const char* model : {"tiny-llama-f32", "tiny-llama-q8_0", "tiny-llama-q4_k_m"}) {
    CAPTURE(std::string(model));
    auto file = tg::gguf::file::open(tg::test::fixture(std::string("models/") + model + ".gguf"));
    // A full chunk of 8 (its kernels fixed to 8 tokens), a chunk of 4 (the any-length ones), then
    // decode steps.
    tg::model::transformer m(dev, file, {.max_context = 64, .chunk_size = 8});
    const int before = module_loads();
    const std::vector<std::int32_t> prompt = {1, 450, 4996, 17354, 1701, 432, 17204, 975, 278, 17366, 11203, 29889};
    (void)m.forward(std::span(prompt).first(8), 0, tg::model::head::all);
    (void)m.forward(std::span(prompt).subspan(8), 8, tg::model::head::all);
    std::int32_t next = 1;
    for (int pos = 12; pos < 15; ++pos) (void)m.forward(std::span(&next, 1), pos);
    MESSAGE(std::string(model) << ": " << module_loads() - before << " kernels loaded as PTX");
    CHECK(module_loads() - before > 10);
    // -v's profile on NV: each launch timed by its pair of CUDA events, read after the step. The
    // stand-in answers 2.5 ms for every pair, so each kernel's time is its launches x 2.5 ms, and
    // a matmul's line gives its weights' rate.
    m.set_profiling(true);
    (void)m.forward(std::span(&next, 1), 15);
    const std::string report = m.profile_report();
    CAPTURE(report);
    std::istringstream lines(report);
    int kernels = 0, matmuls = 0;
    for (std::string line; std::getline(lines, line); ++kernels) {
      CAPTURE(line);
      const std::size_t x = line.find(" x");
      REQUIRE(x != std::string::npos);
      const double ms = std::stod(line), launches = std::stod(line.substr(x + 2));  // "1.5 ms (3%) name x6  [...]"
      CHECK(ms == doctest::Approx(2.5 * launches));
      CHECK(line.find("sm_90, ") != std::string::npos);
      matmuls += line.find(" GB/s") != std::string::npos;
    }
    CHECK(kernels > 5);
    CHECK(matmuls >= 3);
    m.set_profiling(false);
  }
}

TEST_CASE("the LLM's decode steps replay as CUDA graphs, one graph launch a step") {
  const char* fake = std::getenv("TG_FAKE_LIBCUDA");
  REQUIRE(fake != nullptr);
  setenv("TG_LIBCUDA", fake, 1);
  unsetenv("TG_NV_GRAPHS");  // the default
  tg::device dev("NV");
  void* lib = dlopen(fake, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(lib != nullptr);
  auto graph_launches = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_graph_launches"));
  REQUIRE(reinterpret_cast<void*>(graph_launches) != nullptr);
  auto file = tg::gguf::file::open(tg::test::fixture("models/tiny-llama-q8_0.gguf"));
  tg::model::transformer m(dev, file, {.max_context = 64, .chunk_size = 16});
  const std::vector<std::int32_t> prompt = {1, 450, 4996, 17354};
  (void)m.forward(prompt, 0, tg::model::head::last);
  const int before = graph_launches();
  std::int32_t next = 1;
  for (int pos = 4; pos < 8; ++pos) (void)m.forward(std::span(&next, 1), pos);
  CHECK(graph_launches() == before + 4);
}
