// quickstart.cpp: a tensor expression in C++, lowered to kernels at compile time and run
// on a device: the CPU by default, or any tg device by name (`--device AMD:EMU` compiles the
// kernels for an RDNA3 GPU and runs their machine code on tg's emulated one; `--device AMD`
// on a real card).
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <tg/device.hpp>
#include <tg/tg.hpp>

// The expression is a type: nothing is computed here.
constexpr auto a = tg::input<float>("a", tg::dims<64, 32>);
constexpr auto b = tg::input<float>("b", tg::dims<32, 16>);
constexpr auto y = tg::relu(tg::matmul(a, b)).sum(tg::axis<1>);  // shape (64)

// Lowering runs in the compiler: the plan is a constant with its kernel ASTs.
constexpr auto plan = tg::lower(y);
static_assert(plan.kernel_count() == 2, "relu(matmul) with its reduce, then the row sum");

int main(int argc, char** argv) {
  std::string name = "CPU";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      name = argv[++i];
    } else {
      const bool help = std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0;
      std::fprintf(help ? stdout : stderr,
                   "usage: quickstart [--device NAME]\n"
                   "  Computes relu(a @ b).sum(axis 1) for random a (64x32) and b (32x16) on the device and checks it\n"
                   "  against plain C++. NAME: CPU (default), AMD, AMD:<n>, AMD:USB:<n>, or AMD:EMU[:gfx11|gfx12|usb]\n"
                   "  (an emulated GPU that runs the compiled machine code).\n");
      if (!help) std::fprintf(stderr, "quickstart: unknown argument '%s'\n", argv[i]);
      return help ? 0 : 2;
    }
  }
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> a_host(64 * 32), b_host(32 * 16);
  for (float& v : a_host) v = normal(rng);
  for (float& v : b_host) v = normal(rng);

  std::vector<float> y_host;
  try {
    tg::device dev(name);
    y_host = dev.run(plan, {{"a", a_host}, {"b", b_host}}).to_vector<float>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickstart: %s\n", e.what());
    return 1;
  }

  // The same thing in plain C++, to show the result is right.
  double worst = 0;
  for (int i = 0; i < 64; ++i) {
    double row = 0;
    for (int j = 0; j < 16; ++j) {
      double dot = 0;
      for (int k = 0; k < 32; ++k) dot += double(a_host[i * 32 + k]) * b_host[k * 16 + j];
      row += dot > 0 ? dot : 0;
    }
    worst = std::max(worst, std::abs(row - y_host[std::size_t(i)]));
  }
  std::printf("tg quickstart on %s: y = relu(a @ b).sum(axis 1), a 64x32, b 32x16, %d kernels\n", name.c_str(),
              plan.kernel_count());
  std::printf("y[0..4] = %.4f %.4f %.4f %.4f %.4f\n", y_host[0], y_host[1], y_host[2], y_host[3], y_host[4]);
  std::printf("max |y - reference| = %.2e\n", worst);
  return worst < 1e-3 ? 0 : 1;
}
