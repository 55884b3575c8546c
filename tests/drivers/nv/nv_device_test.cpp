// nv_device_test.cpp: the NV device without an NVIDIA GPU. Its errors: no driver library, a
// library without the functions tg needs, a driver that finds no GPU, a bad device number. Then,
// on a stand-in driver (fake_libcuda.cpp: host memory, launches recorded rather than run), the
// backend's own work: device information, copies large enough to go through the pinned staging
// buffer, PTX handed to the driver's loader, and launches with the grid, the block and the
// parameters (buffer addresses, then variables) tg's NVPTX kernels expect. The test cases run in
// this order: the driver loads once per process, and only a successful load is kept.
// TG_FAKE_LIBCUDA and TG_FAKE_LIBCUDA_PARTIAL name the two stand-in libraries (meson sets them).
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <tg/device.hpp>
#include <tg/graph.hpp>
#include <tg/tg.hpp>

#include "drivers/nv/nv_backend.hpp"

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  REQUIRE_MESSAGE(v != nullptr, std::string(name) << " is not set (meson sets it)");
  return v;
}

std::string open_error(const char* device_name = "NV") {
  try {
    tg::device dev(device_name);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(opened)";
}

struct fake_launch {
  unsigned grid[3], block[3];
  int params;
  std::uint64_t values[16];
};

}  // namespace

TEST_CASE("without the NVIDIA driver, NV says which library it could not load") {
  setenv("TG_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const std::string e = open_error();
  CHECK(e.find("cannot load the CUDA driver /nonexistent/libcuda.so.1") != std::string::npos);
  CHECK(e.find("needs the NVIDIA driver installed") != std::string::npos);
  CHECK_THROWS_WITH_AS(tg::device("NV:first"), doctest::Contains("give a GPU number"), tg::usage_error);
}

TEST_CASE("a driver library without the functions tg needs is named with the first one missing") {
  setenv("TG_LIBCUDA", env("TG_FAKE_LIBCUDA_PARTIAL").c_str(), 1);
  const std::string e = open_error();
  CHECK(e.find("has no cuGetErrorName") != std::string::npos);
  CHECK(e.find("too old") != std::string::npos);
}

TEST_CASE("a driver that finds no GPU says so, with the driver's own error") {
  setenv("TG_LIBCUDA", env("TG_FAKE_LIBCUDA").c_str(), 1);
  setenv("FAKE_CUDA_MODE", "no_device", 1);
  const std::string e = open_error();
  CHECK(e.find("the NVIDIA driver found no GPU") != std::string::npos);
  CHECK(e.find("CUDA_ERROR_NO_DEVICE") != std::string::npos);
  unsetenv("FAKE_CUDA_MODE");
}

TEST_CASE("on a stand-in driver: device information, staged copies, PTX loaded, launches with their grid and parameters") {
  setenv("TG_LIBCUDA", env("TG_FAKE_LIBCUDA").c_str(), 1);
  tg::device dev("NV");
  auto& nv = dynamic_cast<tg::nv::nv_backend&>(dev.impl());
  CHECK(nv.info().name == "Fake GPU");
  CHECK(nv.info().arch == "sm_90");
  CHECK(nv.info().multiprocessors == 132);
  CHECK_THROWS_WITH_AS(tg::device("NV:1"), doctest::Contains("this machine has 1 NVIDIA GPU (NV:0)"), tg::usage_error);

  void* lib = dlopen(env("TG_FAKE_LIBCUDA").c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(lib != nullptr);
  auto launches = reinterpret_cast<int (*)(const fake_launch**)>(dlsym(lib, "fake_cuda_launches"));
  auto last_ptx = reinterpret_cast<const char* (*)()>(dlsym(lib, "fake_cuda_last_ptx"));
  auto host_allocs = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_host_allocs"));
  REQUIRE(reinterpret_cast<void*>(launches) != nullptr);
  REQUIRE(reinterpret_cast<void*>(last_ptx) != nullptr);
  REQUIRE(reinterpret_cast<void*>(host_allocs) != nullptr);

  SUBCASE("a 40 MiB copy goes through the pinned staging halves and back intact") {
    const std::size_t n = (40u << 20) + 12345;
    std::vector<std::byte> in(n), out(n);
    std::mt19937 rng(3);
    for (auto& b : in) b = std::byte(rng());
    tg::buffer buf = dev.allocate(n);
    buf.copy_in(in.data(), n);
    buf.copy_out(out.data(), n);
    CHECK(in == out);
    CHECK(host_allocs() == 1);  // the staging buffer, made once
  }
  SUBCASE("a plan's kernel: sm_90 PTX with its entry, 4 blocks of 256 for 1000 elements, buffer addresses as parameters") {
    constexpr auto x = tg::input<float>("x", tg::dims<1000>);
    constexpr auto plan = tg::lower(x * 3.0f + 1.0f);
    std::vector<float> xs(1000, 1.0f);
    const fake_launch* recorded = nullptr;
    const int before = launches(&recorded);
    setenv("FAKE_CUDA_PARAMS", "2", 1);
    (void)dev.run(plan, {{"x", xs}});  // the stand-in runs nothing: only what was asked is checked
    const int after = launches(&recorded);
    REQUIRE(after == before + 1);
    const fake_launch& l = recorded[after - 1];
    CHECK(l.grid[0] == 4);
    CHECK((l.grid[1] == 1 && l.grid[2] == 1));
    CHECK((l.block[0] == 256 && l.block[1] == 1 && l.block[2] == 1));
    CHECK(l.values[0] != 0);
    CHECK(l.values[1] != 0);
    CHECK(l.values[0] != l.values[1]);
    const std::string ptx = last_ptx();
    CHECK(ptx.find(".target sm_90") != std::string::npos);
    CHECK(ptx.find(".visible .entry") != std::string::npos);
  }
  SUBCASE("a prepared kernel says what the driver made of it: target, schedule, registers, local memory") {
    tg::kernel_builder kb;
    auto i = kb.output_range(1000);
    kb.store(0, i, kb.load<float>(1, i) * 2.0f);
    const std::string form = dev.prepare(kb.finish()).describe();
    CHECK(form == "sm_90, 1 threads per output, 40 registers, 0 local bytes per thread");  // the stand-in's 40
  }
  SUBCASE("a buffer off the 16-byte boundary the kernels' loads assume is refused at launch, naming its slot") {
    tg::kernel_builder kb;
    auto i = kb.output_range(64);
    kb.store(0, i, kb.load<float>(1, i) + 1.0f);
    const tg::prepared_kernel k = dev.prepare(kb.finish());
    tg::buffer out = dev.allocate(256), in = dev.allocate(256 + 8);
    std::vector<void*> pointers{out.data(), static_cast<std::byte*>(in.data()) + 8};
    CHECK_THROWS_WITH_AS(k.compiled()->launch(pointers, {}), doctest::Contains("buffer slot 1"), tg::usage_error);
    pointers[1] = in.data();
    CHECK_NOTHROW(k.compiled()->launch(pointers, {}));
  }
  SUBCASE("work that never finishes is reported after the device's timeout, naming the device") {
    setenv("FAKE_CUDA_MODE", "busy", 1);
    nv.timeout = std::chrono::seconds(1);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(dev.synchronize(), doctest::Contains("NV: the GPU's work did not finish within 1 s"), tg::device_error);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(waited >= 1.0);
    CHECK(waited < 3.0);
    unsetenv("FAKE_CUDA_MODE");
    nv.timeout = std::chrono::seconds(60);
    CHECK_NOTHROW(dev.synchronize());
  }
  SUBCASE("a graph replays as one CUDA graph launch, its nodes updated from the replay's values (TG_NV_GRAPHS=0: a launch list)") {
    auto graph_launches = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_graph_launches"));
    REQUIRE(reinterpret_cast<void*>(graph_launches) != nullptr);
    tg::kernel_builder kb;  // out[i] = in[i] + 1 for i < n: the grid follows n
    auto i = kb.output_range(kb.variable(0));
    kb.store(0, i, kb.load<float>(1, i) + 1.0f);
    const tg::prepared_kernel k = dev.prepare(kb.finish());
    tg::buffer out = dev.allocate(4096 * 4), in0 = dev.allocate(4096 * 4), in1 = dev.allocate(4096 * 4);
    auto capture = [&] {
      tg::graph_builder b(dev);
      const tg::graph_var n = b.var("n", 1000);
      const tg::graph_buffer in = b.buffer("in", in0);
      b.add(k, {out, in}, {n});
      b.add(k, {out, out}, {n + 24});  // the variable plus a constant
      return b.finish();
    };
    setenv("FAKE_CUDA_PARAMS", "3", 1);
    const fake_launch* recorded = nullptr;
    auto address = [](const tg::buffer& b) { return std::uint64_t(reinterpret_cast<std::uintptr_t>(b.data())); };
    unsetenv("TG_NV_GRAPHS");  // the default
    tg::graph g = capture();
    const int graphs_before = graph_launches(), before = launches(&recorded);
    g.replay({3000}, {{0, in1}});
    CHECK(graph_launches() == graphs_before + 1);
    REQUIRE(launches(&recorded) == before + 2);
    CHECK(recorded[before].grid[0] == (3000 + 255) / 256);
    CHECK(recorded[before].values[1] == address(in1));
    CHECK(recorded[before].values[2] == 3000);
    CHECK(recorded[before + 1].grid[0] == (3024 + 255) / 256);
    CHECK(recorded[before + 1].values[2] == 3024);
    g.replay({10});  // back to the captured buffer
    REQUIRE(launches(&recorded) == before + 4);
    CHECK(recorded[before + 2].grid[0] == 1);
    CHECK(recorded[before + 2].values[1] == address(in0));
    CHECK(recorded[before + 3].values[2] == 34);
    CHECK(graph_launches() == graphs_before + 2);
    // Without them, the same graph is the launch list: the same launches, no graph launch.
    setenv("TG_NV_GRAPHS", "0", 1);
    tg::graph plain = capture();
    const int list_before = launches(&recorded);
    plain.replay({3000}, {{0, in1}});
    CHECK(graph_launches() == graphs_before + 2);
    REQUIRE(launches(&recorded) == list_before + 2);
    CHECK(recorded[list_before].grid[0] == (3000 + 255) / 256);
    CHECK(recorded[list_before + 1].values[2] == 3024);
    unsetenv("TG_NV_GRAPHS");
  }
  SUBCASE("the launch timer marks each launch with CUDA events and reads their spans at finish, not the host's clock") {
    auto timer = nv.make_launch_timer();
    for (int i = 0; i < 3; ++i) {
      timer->start();
      timer->stop();
    }
    const std::vector<double> spans = timer->finish();
    REQUIRE(spans.size() == 3);
    for (double s : spans) CHECK(s == doctest::Approx(2.5e-3));  // the stand-in's elapsed time for every pair of events
    CHECK(timer->finish().empty());  // each span is reported once
    timer->start();
    CHECK_THROWS_AS(timer->finish(), tg::usage_error);  // a start without its stop
  }
  SUBCASE("a symbolic dim's value is the parameter after the buffers, and sizes the grid") {
    constexpr auto n = tg::sym<"n", 1, 100000>;
    constexpr auto x = tg::input<float>("x", tg::dims<n>);
    constexpr auto plan = tg::lower(x + 1.0f);
    std::vector<float> xs(3000, 2.0f);
    const fake_launch* recorded = nullptr;
    setenv("FAKE_CUDA_PARAMS", "3", 1);
    (void)dev.run(plan, {{"x", xs}}, {{"n", 3000}});
    const int count = launches(&recorded);
    const fake_launch& l = recorded[count - 1];
    CHECK(l.grid[0] == (3000 + 255) / 256);
    CHECK(l.values[2] == 3000);
  }
}
