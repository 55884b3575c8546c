// gpu_roofline.cpp: tg kernels compiled for gfx11 and gfx12 with the default opts, run on the
// emulated GPU (which executes their machine code and counts what each dispatch did), and the
// modeled time of each dispatch on an RX 7900 XTX and an RX 9070 XT (drivers/emu/shader/modeled_cost.hpp).
// The emulated gfx12 is a gfx1200; the RX 9070 XT (gfx1201) runs the same instructions, so its
// counters stand for it. Each result is checked against the CPU device first: a wrong kernel is
// not modeled.
//
//   build/tests/bench/gpu_roofline            matvec, softmax, rmsnorm, and matmul at 256
//   TG_ROOFLINE_MATMUL=1024 build/tests/bench/gpu_roofline   the matmul at 1024 (slow to interpret)
#include <tg/device.hpp>
#include <tg/tg.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/bench/gpu_roofline_rig.hpp"

namespace {

using tg::bench::random_floats;
using tg::bench::roofline_gpu;

std::vector<tg::half> to_half(const std::vector<float>& v) {
  std::vector<tg::half> h;
  h.reserve(v.size());
  for (float x : v) h.emplace_back(x);
  return h;
}

// Runs `plan` on the CPU and on each GPU, then prints the model of each GPU's dispatches.
template <class Plan>
void report(const char* label, const Plan& plan, std::vector<roofline_gpu*>& gpus, std::initializer_list<tg::named_input> inputs) {
  tg::device cpu("CPU");
  const std::vector<float> want = cpu.run(plan, inputs).template to_vector<float>();
  for (roofline_gpu* g : gpus) {
    g->seen.clear();
    std::vector<float> got;
    try {
      got = g->dev.run(plan, inputs).template to_vector<float>();
    } catch (const std::exception& e) {
      std::printf("%-26s %-12s failed: %s%s\n", label, g->card.name, e.what(), g->faults().c_str());
      continue;
    }
    const double err = tg::bench::relative_error(got, want);
    if (!(err < 1e-3)) {
      std::printf("%-26s %-12s wrong result (relative error %.2e against the CPU): not modeled\n", label, g->card.name, err);
      continue;
    }
    tg::bench::print_dispatches(label, *g);
  }
}

}  // namespace

int main() {
  const char* matmul_env = std::getenv("TG_ROOFLINE_MATMUL");
  const bool big_matmul = matmul_env != nullptr && std::string(matmul_env) == "1024";
  tg::bench::print_preamble("matvec, softmax, rmsnorm and matmul written in the DSL.");
  roofline_gpu gfx11("AMD:EMU:gfx11", tg::emu::shader::rx_7900_xtx), gfx12("AMD:EMU:gfx12", tg::emu::shader::rx_9070_xt);
  std::vector<roofline_gpu*> gpus{&gfx11, &gfx12};
  tg::bench::print_header();

  constexpr auto w = tg::input<float>("w", tg::dims<4096, 4096>);
  constexpr auto x = tg::input<float>("x", tg::dims<4096>);
  const auto ws = random_floats(4096 * 4096, 1), xs = random_floats(4096, 2);
  report("matvec f32 4096x4096", tg::lower((w * x).sum(tg::axis<1>)), gpus, {{"w", ws}, {"x", xs}});

  constexpr auto wh = tg::input<tg::half>("w", tg::dims<4096, 4096>);
  constexpr auto xh = tg::input<tg::half>("x", tg::dims<4096>);
  const auto whs = to_half(ws), xhs = to_half(xs);
  report("matvec f16 4096x4096", tg::lower((tg::cast<float>(wh) * tg::cast<float>(xh)).sum(tg::axis<1>)), gpus,
         {{"w", whs}, {"x", xhs}});

  constexpr auto rows = tg::input<float>("x", tg::dims<32, 4096>);
  constexpr auto weight = tg::input<float>("g", tg::dims<4096>);
  const auto rs = random_floats(32 * 4096, 3), gs = random_floats(4096, 4);
  report("softmax 32x4096", tg::lower(tg::softmax(rows)), gpus, {{"x", rs}});
  report("rmsnorm 32x4096", tg::lower(tg::rmsnorm(rows, weight, 1e-5f)), gpus, {{"x", rs}, {"g", gs}});

  if (big_matmul) {
    constexpr auto a = tg::input<float>("a", tg::dims<1024, 1024>);
    constexpr auto b = tg::input<float>("b", tg::dims<1024, 1024>);
    const auto as = random_floats(1024 * 1024, 5), bs = random_floats(1024 * 1024, 6);
    report("matmul f32 1024^3", tg::lower(tg::matmul(a, b)), gpus, {{"a", as}, {"b", bs}});
  } else {
    constexpr auto a = tg::input<float>("a", tg::dims<256, 256>);
    constexpr auto b = tg::input<float>("b", tg::dims<256, 256>);
    const auto as = random_floats(256 * 256, 5), bs = random_floats(256 * 256, 6);
    report("matmul f32 256^3", tg::lower(tg::matmul(a, b)), gpus, {{"a", as}, {"b", bs}});
  }
  return 0;
}
