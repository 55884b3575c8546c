// quickstart.cpp: a tensor expression in C++, lowered to kernels at compile time and run
// on the CPU.
#include <cstdio>
#include <random>
#include <tg/device.hpp>
#include <tg/tg.hpp>

// The expression is a type: nothing is computed here.
constexpr auto a = tg::input<float>("a", tg::dims<64, 32>);
constexpr auto b = tg::input<float>("b", tg::dims<32, 16>);
constexpr auto y = tg::relu(tg::matmul(a, b)).sum(tg::axis<1>);  // shape (64)

// Lowering runs in the compiler: the plan is a constant with its kernel ASTs.
constexpr auto plan = tg::lower(y);
static_assert(plan.kernel_count() == 2, "relu(matmul) with its reduce, then the row sum");

int main() {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> a_host(64 * 32), b_host(32 * 16);
  for (float& v : a_host) v = normal(rng);
  for (float& v : b_host) v = normal(rng);

  tg::device cpu("CPU");
  tg::host_tensor out = cpu.run(plan, {{"a", a_host}, {"b", b_host}});
  std::vector<float> y_host = out.to_vector<float>();

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
  std::printf("tg quickstart: y = relu(a @ b).sum(axis 1), a 64x32, b 32x16, %d kernels\n", plan.kernel_count());
  std::printf("y[0..4] = %.4f %.4f %.4f %.4f %.4f\n", y_host[0], y_host[1], y_host[2], y_host[3], y_host[4]);
  std::printf("max |y - reference| = %.2e\n", worst);
  return worst < 1e-3 ? 0 : 1;
}
