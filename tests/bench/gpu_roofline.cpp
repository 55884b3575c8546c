// gpu_roofline.cpp: tg kernels compiled for gfx11 and gfx12 with the default opts, run on the
// emulated GPU (which executes their machine code and counts what each dispatch did), and the
// modeled time of each dispatch on an RX 7900 XTX and an RX 9070 XT (gpu_roofline_model.hpp).
// The emulated gfx12 is a gfx1200; the RX 9070 XT (gfx1201) runs the same instructions, so its
// counters stand for it. Each result is checked against the CPU device first: a wrong kernel is
// not modeled.
//
//   build/tests/bench/gpu_roofline            matvec, softmax, rmsnorm, and matmul at 256
//   TG_ROOFLINE_MATMUL=1024 build/tests/bench/gpu_roofline   the matmul at 1024 (slow to interpret)
#include <tg/device.hpp>
#include <tg/tg.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "drivers/emu/emu_device.hpp"
#include "tests/bench/gpu_roofline_model.hpp"

namespace {

using tg::emu::shader::dispatch_counters;

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

std::vector<tg::half> to_half(const std::vector<float>& v) {
  std::vector<tg::half> h;
  h.reserve(v.size());
  for (float x : v) h.emplace_back(x);
  return h;
}

// The largest |gpu - cpu| relative to the largest |cpu|.
double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0, scale = 1e-30;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, double(std::fabs(got[i] - want[i])));
    scale = std::max(scale, double(std::fabs(want[i])));
  }
  return got.size() == want.size() ? err / scale : INFINITY;
}

struct gpu {
  const char* device_name;
  const tg::bench::card_model& card;
  tg::device dev;
  std::mutex mutex;
  std::vector<dispatch_counters> seen;

  gpu(const char* name, const tg::bench::card_model& c) : device_name(name), card(c), dev(name) {
    dynamic_cast<tg::emu::emu_device&>(dev.impl()).emulated_gpu().observe_dispatches(
        [this](const tg::emu::shader::launch&, const dispatch_counters& k) {
          std::lock_guard lock(mutex);
          seen.push_back(k);
        });
  }
  ~gpu() { dynamic_cast<tg::emu::emu_device&>(dev.impl()).emulated_gpu().observe_dispatches({}); }
};

void print_header() {
  std::printf("%-22s %-12s %4s %5s %6s %7s %11s %7s %10s %10s %7s %6s\n", "kernel", "card", "disp", "VGPRs", "waves/", "waves",
              "VALU", "load", "MB", "model us", "bound", "BW");
  std::printf("%-22s %-12s %4s %5s %6s %7s %11s %7s %10s %10s %7s %6s\n", "", "", "", "", "SIMD", "", "w-inst", "waits",
              "(lines)", "", "", "share");
}

// Runs `plan` on the CPU and on each GPU, then prints the model of each GPU's dispatches.
template <class Plan>
void report(const char* label, const Plan& plan, std::vector<gpu*>& gpus, std::initializer_list<tg::named_input> inputs) {
  tg::device cpu("CPU");
  const std::vector<float> want = cpu.run(plan, inputs).template to_vector<float>();
  for (gpu* g : gpus) {
    g->seen.clear();
    std::vector<float> got;
    try {
      got = g->dev.run(plan, inputs).template to_vector<float>();
    } catch (const std::exception& e) {
      std::string faults;
      for (const auto& f : dynamic_cast<tg::emu::emu_device&>(g->dev.impl()).emulated_gpu().faults())
        faults += "; " + f.message;
      std::printf("%-22s %-12s failed: %s%s\n", label, g->card.name, e.what(), faults.c_str());
      continue;
    }
    const double err = relative_error(got, want);
    if (!(err < 1e-3)) {
      std::printf("%-22s %-12s wrong result (relative error %.2e against the CPU): not modeled\n", label, g->card.name, err);
      continue;
    }
    std::lock_guard lock(g->mutex);
    dispatch_counters total{};
    double modeled = 0, memory = 0;
    for (const dispatch_counters& k : g->seen) {
      const tg::bench::modeled_dispatch m = tg::bench::model(g->card, k);
      std::printf("%-22s %-12s %4s %5u %6u %7llu %11llu %7llu %10.3f %10.2f %7s %5.1f%%\n", label, g->card.name, "1",
                  k.vgprs, k.waves_per_simd, (unsigned long long)k.waves, (unsigned long long)k.valu,
                  (unsigned long long)k.max_wave_memory_waits,
                  double(k.global_lines) * tg::bench::line_bytes / 1e6, m.total_s * 1e6,
                  m.bound(), 100 * m.bandwidth_share());
      modeled += m.total_s;
      memory += m.memory_s;
      total.global_lines += k.global_lines;
    }
    if (g->seen.size() > 1)
      std::printf("%-22s %-12s %4zu %5s %6s %7s %11s %7s %10.3f %10.2f %7s %5.1f%%\n", label, g->card.name,
                  g->seen.size(), "", "", "", "", "", double(total.global_lines) * tg::bench::line_bytes / 1e6, modeled * 1e6, "",
                  100 * memory / modeled);
  }
}

}  // namespace

int main() {
  // The generator is on by default now; the variable is kept for builds where it was opt-in.
  setenv("TG_AMD_CODEGEN", "1", 0);
  const char* matmul_env = std::getenv("TG_ROOFLINE_MATMUL");
  const bool big_matmul = matmul_env != nullptr && std::string(matmul_env) == "1024";

  std::printf("A MODEL, not a measurement: modeled time = max(distinct 128-byte lines x 128 B / DRAM bandwidth,\n"
              "VALU wave-instructions on the busiest SIMD / clock, the most waits for loads of one wave x 500 ns x rounds\n"
              "of resident waves) + 2 us per dispatch (tests/bench/gpu_roofline_model.hpp).\n"
              "Peaks: %s %.0f GB/s, %u CUs (%u SIMDs), %.2f GHz; %s %.0f GB/s, %u CUs (%u SIMDs), %.2f GHz.\n"
              "Counters from tg's emulated GPU running the kernels' machine code (gfx1100 and gfx1200), default opts.\n\n",
              tg::bench::rx_7900_xtx.name, tg::bench::rx_7900_xtx.bytes_per_second / 1e9, tg::bench::rx_7900_xtx.compute_units,
              tg::bench::rx_7900_xtx.simds(), tg::bench::rx_7900_xtx.clock_hz / 1e9, tg::bench::rx_9070_xt.name,
              tg::bench::rx_9070_xt.bytes_per_second / 1e9, tg::bench::rx_9070_xt.compute_units, tg::bench::rx_9070_xt.simds(),
              tg::bench::rx_9070_xt.clock_hz / 1e9);
  gpu gfx11("AMD:EMU:gfx11", tg::bench::rx_7900_xtx), gfx12("AMD:EMU:gfx12", tg::bench::rx_9070_xt);
  std::vector<gpu*> gpus{&gfx11, &gfx12};
  print_header();

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
