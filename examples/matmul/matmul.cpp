// matmul.cpp: benchmark of an N x N float32 matmul on a tg device, printing GFLOPS.
//   matmul [N] [--device CPU] [--runs R]    N is one of 256, 512, 1024, 2048
#include <cstdio>
#include <cstring>
#include <string>
#include "examples/matmul/matmul_runner.hpp"

namespace {

template <int N>
int bench(tg::device& dev, int runs) {
  tg::examples::matmul_runner<N> m(dev);
  double gflops = m.gflops(runs);
  double err = m.spot_check();
  std::printf("matmul %dx%d float32 on %s: %.1f GFLOPS (median of %d), max rel error %.1e\n", N, N, dev.name().c_str(),
              gflops, runs, err);
  return err < 1e-3 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 1024, runs = 5;
  std::string device = "CPU";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf("usage: matmul [N] [--device NAME] [--runs R]\n"
                  "  N       matrix size: 256, 512, 1024 or 2048 (default 1024)\n"
                  "  --device  tg device (default CPU)\n"
                  "  --runs    timed launches, the median is printed (default 5)\n");
      return 0;
    }
    if (!std::strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
    else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else n = std::atoi(argv[i]);
  }
  try {
    tg::device dev(device);
    switch (n) {
      case 256: return bench<256>(dev, runs);
      case 512: return bench<512>(dev, runs);
      case 1024: return bench<1024>(dev, runs);
      case 2048: return bench<2048>(dev, runs);
      default: std::fprintf(stderr, "error: N must be 256, 512, 1024 or 2048 (got %d)\n", n); return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
