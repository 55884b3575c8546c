// matmul_bench.cpp: tg's float32 matmul against OpenBLAS's sgemm on the same machine in
// the same run, for N = 1024 and 2048 at 1 and 2 threads (OpenBLAS pinned to the same count
// with openblas_set_num_threads): tg's default loop shape, the one BEAM finds (TG_BEAM=2,
// searched at the first launch) and the cached one a later run gets (tuning cache, no search).
// The last two run in child processes with a fresh TG_CACHE in a temporary folder, so the
// user's cache is neither read nor written. Prints GFLOPS and tg / OpenBLAS.
//   matmul_bench            # 1 and 2 threads
//   matmul_bench 2          # 2 threads only
//   matmul_bench 2 nobeam   # without the BEAM and cached columns (seconds, not minutes)
#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>
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

// One tg measurement, under whatever TG_BEAM and TG_CACHE say; prints "gflops first_launch_s".
template <int N>
void measure_tg_only(int runs) {
  tg::device dev("CPU");  // TG_THREADS threads
  auto start = std::chrono::steady_clock::now();
  tg::examples::matmul_runner<N> m(dev);
  m.launch();  // compiles; with TG_BEAM, searches
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%f %f\n", m.gflops(runs), first);
}

struct child_result {
  double gflops = 0, first_launch_s = 0;
};

// This program again (--tg-only N) with TG_CACHE, TG_THREADS and, for the search, TG_BEAM set.
child_result run_child(int n, int threads, const std::string& cache, bool beam) {
  std::string command = "TG_CACHE='" + cache + "' TG_THREADS=" + std::to_string(threads) + " " + (beam ? "TG_BEAM=2 " : "") +
                        "'" + std::filesystem::read_symlink("/proc/self/exe").string() + "' --tg-only " + std::to_string(n);
  child_result r;
  if (FILE* p = popen(command.c_str(), "r")) {
    if (std::fscanf(p, "%lf %lf", &r.gflops, &r.first_launch_s) != 2) r = {};
    pclose(p);
  }
  return r;
}

template <int N>
void compare(int threads, int runs, const std::string& cache, bool beam) {
  tg::device dev("CPU", {.threads = threads});
  openblas_set_num_threads(threads);
  tg::examples::matmul_runner<N> m(dev);
  const double ours = m.gflops(runs);
  const double blas = openblas_gflops<N>(m.a_host, m.b_host, runs);
  std::printf("matmul %4d, %d thread%s: tg %7.1f GFLOPS  openblas %7.1f GFLOPS  ratio %.3f  (max rel error %.1e)  [%s]\n", N,
              threads, threads == 1 ? " " : "s", ours, blas, ours / blas, m.spot_check(), m.program->describe().c_str());
  std::fflush(stdout);
  if (!beam) return;
  const child_result tuned = run_child(N, threads, cache, true), cached = run_child(N, threads, cache, false);
  std::printf("matmul %4d, %d thread%s: default %7.1f  BEAM %7.1f (search and compile %.1f s)  cached %7.1f (first launch %.2f s)"
              " GFLOPS; default / openblas %.3f, cached / openblas %.3f\n",
              N, threads, threads == 1 ? " " : "s", ours, tuned.gflops, tuned.first_launch_s, cached.gflops,
              cached.first_launch_s, ours / blas, cached.gflops / blas);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--tg-only") {
    if (std::atoi(argv[2]) == 1024) measure_tg_only<1024>(15);
    if (std::atoi(argv[2]) == 2048) measure_tg_only<2048>(5);
    return 0;
  }
  std::vector<int> thread_counts = {1, 2};
  if (argc >= 2) thread_counts = {std::max(1, std::atoi(argv[1]))};
  const bool beam = !(argc >= 3 && std::string(argv[2]) == "nobeam");
  // A fresh cache, set before the first kernel compiles: the default column reads no entry.
  std::string folder = (std::filesystem::temp_directory_path() / "tg_matmul_bench_XXXXXX").string();
  if (mkdtemp(folder.data()) == nullptr) return 1;
  const std::string cache = folder + "/tuning.db";
  setenv("TG_CACHE", cache.c_str(), 1);
  unsetenv("TG_BEAM");
  for (int threads : thread_counts) {
    compare<1024>(threads, 15, cache, beam);
    compare<2048>(threads, 5, cache, beam);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(cache + suffix);  // each thread count searches afresh
  }
  std::filesystem::remove_all(folder);
  return 0;
}
