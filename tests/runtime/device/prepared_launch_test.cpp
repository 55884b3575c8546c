// prepared_launch_test.cpp: a kernel prepared once launches with the same results as
// device::launch, many times over, and the CPU thread pool under it runs every index of
// every job exactly once, whether its workers are spinning or asleep.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/threads/thread_pool.hpp"
#include <tg/device.hpp>

namespace {

// out[i] = sum_k W[i, k] * x[k] for the first `rows` (variable 0) rows.
tg::ast::kernel matvec(std::int64_t cols) {
  tg::kernel_builder kb;
  auto i = kb.output_range(kb.variable(0));
  auto k = kb.reduce_range(cols);
  kb.store(0, i, kb.sum(kb.load<float>(1, i * cols + k) * kb.load<float>(2, k), k));
  return kb.finish();
}

std::vector<float> pattern(std::size_t n, int seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = float(int((i * 7 + std::size_t(seed) * 13) % 17) - 8) / 8.0f;
  return v;
}

struct matvec_case {
  static constexpr std::int64_t rows = 1024, cols = 256;  // big enough to split across threads
  tg::device dev{"CPU"};
  tg::buffer out = dev.allocate(rows * 4), w = dev.allocate(rows * cols * 4), x = dev.allocate(cols * 4);
  matvec_case() {
    auto wv = pattern(std::size_t(rows * cols), 1), xv = pattern(std::size_t(cols), 2);
    w.copy_in(wv.data(), wv.size() * 4);
    x.copy_in(xv.data(), xv.size() * 4);
  }
  std::vector<float> result() {
    std::vector<float> got(static_cast<std::size_t>(rows));
    out.copy_out(got.data(), got.size() * 4);
    return got;
  }
  void clear() {
    std::vector<float> nan(std::size_t(rows), -1.0f);
    out.copy_in(nan.data(), nan.size() * 4);
  }
  // Exact: the pattern's values are multiples of 1/8 and the sums stay small.
  float want(std::int64_t row) const {
    auto wv = pattern(std::size_t(rows * cols), 1), xv = pattern(std::size_t(cols), 2);
    float s = 0;
    for (std::int64_t c = 0; c < cols; ++c) s += wv[std::size_t(row * cols + c)] * xv[std::size_t(c)];
    return s;
  }
};

}  // namespace

TEST_CASE("a prepared kernel gives the same results as device::launch") {
  matvec_case m;
  const tg::ast::kernel k = matvec(m.cols);
  const std::vector<tg::buffer> slots{m.out, m.w, m.x};
  for (std::int64_t rows : {std::int64_t(1), std::int64_t(3), std::int64_t(1000), m.rows}) {
    CAPTURE(rows);
    const std::vector<std::int64_t> vars{rows};
    m.clear();
    m.dev.launch(k, slots, vars);
    const std::vector<float> launched = m.result();
    m.clear();
    m.dev.prepare(k).launch(slots, vars);
    CHECK(m.result() == launched);
    CHECK(launched[std::size_t(rows - 1)] == m.want(rows - 1));
    if (rows < m.rows) CHECK(launched[std::size_t(rows)] == -1.0f);
  }
}

TEST_CASE("a prepared kernel survives many launches, back to back and after idle gaps") {
  matvec_case m;
  const tg::prepared_kernel k = m.dev.prepare(matvec(m.cols));
  const std::vector<tg::buffer> slots{m.out, m.w, m.x};
  const std::vector<float> want = [&] {
    std::vector<float> v;
    for (std::int64_t r = 0; r < m.rows; ++r) v.push_back(m.want(r));
    return v;
  }();
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t rows = i % 2 ? m.rows : 1 + i % 97;  // parallel and single-threaded launches
    m.clear();
    k.launch(slots, std::vector<std::int64_t>{rows});
    // now and then wait long enough for the pool's workers to go to sleep
    if (i % 200 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const std::vector<float> got = m.result();
    REQUIRE(std::vector<float>(got.begin(), got.begin() + rows) == std::vector<float>(want.begin(), want.begin() + rows));
  }
}

TEST_CASE("a prepared launch checks its buffer count") {
  tg::device dev("CPU");
  const tg::prepared_kernel k = dev.prepare(matvec(4));
  CHECK(k.slot_count() == 3);
  tg::buffer b = dev.allocate(64);
  CHECK_THROWS_WITH_AS(k.launch(std::vector<tg::buffer>{b, b}, std::vector<std::int64_t>{4}),
                       "launch: the kernel uses 3 buffer slots, 2 buffers given", tg::usage_error);
  CHECK_THROWS_WITH_AS(tg::prepared_kernel().launch({}), doctest::Contains("the kernel is empty"), tg::usage_error);
}

TEST_CASE("the CPU thread pool runs every index of every job exactly once") {
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    tg::threads::thread_pool pool(threads);
    CHECK(pool.size() == threads);
    for (int n : {0, 1, 2, 7, 64, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
      for (int round = 0; round < 50; ++round) pool.parallel_for(n, [&](int i) { hits[std::size_t(i)]++; });
      for (int i = 0; i < n; ++i) REQUIRE(hits[std::size_t(i)] == 50);
    }
    SUBCASE("more indices than one job word counts") {
      std::vector<std::atomic<int>> hits(70000);
      pool.parallel_for(70000, [&](int i) { hits[std::size_t(i)]++; });
      for (auto& h : hits) REQUIRE(h == 1);
    }
    SUBCASE("after the workers have gone to sleep") {
      std::atomic<int> sum{0};
      for (int round = 0; round < 5; ++round) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        pool.parallel_for(100, [&](int i) { sum += i; });
      }
      CHECK(sum == 5 * 4950);
    }
  }
}

TEST_CASE("the CPU thread pool rethrows the first exception and keeps working") {
  tg::threads::thread_pool pool(2);
  CHECK_THROWS_WITH_AS(pool.parallel_for(16, [](int i) { if (i == 5) throw std::runtime_error("index 5"); }), "index 5",
                       std::runtime_error);
  std::atomic<int> count{0};
  pool.parallel_for(16, [&](int) { count++; });
  CHECK(count == 16);
}

TEST_CASE("the CPU thread pool takes jobs from several threads in turn") {
  tg::threads::thread_pool pool(2);
  std::atomic<long> sum{0};
  auto caller = [&] {
    for (int round = 0; round < 200; ++round) pool.parallel_for(10, [&](int i) { sum += i; });
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  CHECK(sum == 2 * 200 * 45);
}
