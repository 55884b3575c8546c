// matmul_bench.cpp: tg's float32 matmul against OpenBLAS's sgemm on the same machine in
// the same run, for N = 1024 and 2048. Prints GFLOPS of both and tg / OpenBLAS.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include "examples/matmul/matmul_runner.hpp"

namespace {

template <int N>
double openblas_gflops(const std::vector<float>& a, const std::vector<float>& b, int runs) {
  std::vector<float> c(static_cast<std::size_t>(N) * N);
  auto once = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a.data(), N, b.data(), N, 0.0f, c.data(), N);
  };
  once();
  std::vector<double> seconds;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    once();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return 2.0 * N * N * double(N) / seconds[seconds.size() / 2] / 1e9;
}

template <int N>
void compare(tg::device& dev, int runs) {
  tg::examples::matmul_runner<N> m(dev);
  double ours = m.gflops(runs);
  double blas = openblas_gflops<N>(m.a_host, m.b_host, runs);
  std::printf("matmul %4d: tg %7.1f GFLOPS  openblas %7.1f GFLOPS  ratio %.3f  (max rel error %.1e)\n", N, ours, blas,
              ours / blas, m.spot_check());
}

}  // namespace

int main() {
  tg::device dev("CPU");
  compare<1024>(dev, 5);
  compare<2048>(dev, 3);
  return 0;
}
