// matmul_runner.hpp: an N x N float32 matmul lowered at compile time, with its inputs on
// the device, timed per launch (no copies in the timing). Shared by the example and the
// benchmark.
#pragma once
#include <algorithm>
#include <chrono>
#include <random>
#include <tg/device.hpp>
#include <tg/tg.hpp>
#include <vector>

namespace tg::examples {

template <int N>
struct matmul_runner {
  static constexpr auto a = tg::input<float>("a", tg::dims<N, N>);
  static constexpr auto b = tg::input<float>("b", tg::dims<N, N>);
  static constexpr auto plan = tg::lower(tg::matmul(a, b));
  static_assert(plan.kernel_count() == 1);

  tg::device& dev;
  std::vector<float> a_host, b_host;
  tg::buffer a_buf, b_buf, c_buf;
  std::shared_ptr<tg::program> program;

  explicit matmul_runner(tg::device& d) : dev(d), a_host(std::size_t(N) * N), b_host(std::size_t(N) * N) {
    std::mt19937 rng(N);
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& v : a_host) v = u(rng);
    for (float& v : b_host) v = u(rng);
    std::size_t bytes = std::size_t(N) * N * sizeof(float);
    a_buf = dev.allocate(bytes);
    b_buf = dev.allocate(bytes);
    c_buf = dev.allocate(bytes);
    a_buf.copy_in(a_host.data(), bytes);
    b_buf.copy_in(b_host.data(), bytes);
    auto view = plan.view();
    auto nodes = view.kernel_nodes(0);
    program = dev.compile({nodes, view.kernels[0].global_ranges, tg::kernel_name(nodes, view.kernels[0].global_ranges)});
  }

  // Slots follow the plan: slot 0 is the output, then the inputs in the order the kernel reads them.
  void launch() {
    const tg::kernel_info& k = plan.kernels[0];
    std::vector<void*> slots;
    for (int s = 0; s < k.slot_count; ++s) {
      int buf = k.slot_buffer[s];
      slots.push_back(buf == plan.output ? c_buf.data() : plan.buffers[std::size_t(buf)].name[0] == 'a' ? a_buf.data() : b_buf.data());
    }
    program->launch(slots, {});
  }

  // Median GFLOPS over `runs` launches, after one warm-up.
  double gflops(int runs) {
    launch();
    std::vector<double> seconds;
    for (int r = 0; r < runs; ++r) {
      auto start = std::chrono::steady_clock::now();
      launch();
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    return 2.0 * N * N * double(N) / seconds[seconds.size() / 2] / 1e9;
  }

  // Max relative error of a few output elements against a double-precision dot product.
  double spot_check() {
    std::vector<float> c(static_cast<std::size_t>(N) * N);
    c_buf.copy_out(c.data(), c.size() * sizeof(float));
    double worst = 0;
    for (int t = 0; t < 16; ++t) {
      int i = (t * 7919) % N, j = (t * 104729) % N;
      double want = 0;
      for (int k = 0; k < N; ++k) want += double(a_host[std::size_t(i) * N + std::size_t(k)]) * b_host[std::size_t(k) * N + std::size_t(j)];
      worst = std::max(worst, std::abs(want - c[std::size_t(i) * N + std::size_t(j)]) / (1 + std::abs(want)));
    }
    return worst;
  }
};

}  // namespace tg::examples
