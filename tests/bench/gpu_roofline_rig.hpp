// gpu_roofline_rig.hpp: what the roofline benches share (gpu_roofline.cpp for DSL kernels,
// gpu_decode_roofline.cpp for the LLM's decode kernels): an emulated GPU whose dispatches are
// recorded with their cost counters, a check of results against the CPU, and the table rows
// of the modeled time per dispatch (drivers/emu/shader/modeled_cost.hpp).
#pragma once
#include <tg/device.hpp>

#include <cmath>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "drivers/emu/emu_device.hpp"
#include "drivers/emu/shader/modeled_cost.hpp"
#include "tests/bench/random_weights.hpp"

namespace tg::bench {

using emu::shader::card_model;
using emu::shader::dispatch_counters;
using emu::shader::model;
using emu::shader::modeled_dispatch;
using emu::shader::line_bytes;
using emu::shader::rx_7900_xtx;
using emu::shader::rx_9070_xt;

// An emulated GPU standing for `card`, recording every dispatch's counters.
struct roofline_gpu {
  const char* device_name;
  const card_model& card;
  tg::device dev;
  std::mutex mutex;
  std::vector<dispatch_counters> seen;

  roofline_gpu(const char* name, const card_model& c) : device_name(name), card(c), dev(name) {
    emulated().observe_dispatches([this](const emu::shader::launch&, const dispatch_counters& k) {
      std::lock_guard lock(mutex);
      seen.push_back(k);
    });
  }
  ~roofline_gpu() { emulated().observe_dispatches({}); }
  emu::gpu& emulated() { return dynamic_cast<emu::emu_device&>(dev.impl()).emulated_gpu(); }
  std::string faults() {
    std::string text;
    for (const auto& f : emulated().faults()) text += "; " + f.message;
    return text;
  }
};

inline void print_header() {
  std::printf("%-26s %-12s %4s %5s %6s %7s %11s %7s %10s %10s %7s %6s\n", "kernel", "card", "disp", "VGPRs", "waves/", "waves",
              "VALU", "load", "MB", "model us", "bound", "BW");
  std::printf("%-26s %-12s %4s %5s %6s %7s %11s %7s %10s %10s %7s %6s\n", "", "", "", "", "SIMD", "", "w-inst", "waits",
              "(lines)", "", "", "share");
}

// One row per dispatch the GPU recorded since `seen` was cleared, and a total row when there
// are several; returns the modeled seconds of them all.
inline double print_dispatches(const char* label, roofline_gpu& g) {
  std::lock_guard lock(g.mutex);
  double modeled = 0, memory = 0;
  std::uint64_t lines = 0;
  for (const dispatch_counters& k : g.seen) {
    const modeled_dispatch m = model(g.card, k);
    std::printf("%-26s %-12s %4s %5u %6u %7llu %11llu %7llu %10.3f %10.2f %7s %5.1f%%\n", label, g.card.name, "1", k.vgprs,
                k.waves_per_simd, (unsigned long long)k.waves, (unsigned long long)k.valu,
                (unsigned long long)k.max_wave_memory_waits, double(k.global_lines) * line_bytes / 1e6, m.total_s * 1e6,
                m.bound(), 100 * m.bandwidth_share());
    modeled += m.total_s;
    memory += m.memory_s;
    lines += k.global_lines;
  }
  if (g.seen.size() > 1)
    std::printf("%-26s %-12s %4zu %5s %6s %7s %11s %7s %10.3f %10.2f %7s %5.1f%%\n", label, g.card.name, g.seen.size(), "", "",
                "", "", "", double(lines) * line_bytes / 1e6, modeled * 1e6, "", 100 * memory / modeled);
  return modeled;
}

inline void print_preamble(const char* what) {
  std::printf("A MODEL, not a measurement: modeled time = max(distinct 128-byte lines x 128 B / DRAM bandwidth,\n"
              "VALU wave-instructions on the busiest SIMD / clock, the most latency-costing load waits of one wave x\n"
              "500 ns x rounds of resident waves) + 2 us per dispatch (drivers/emu/shader/modeled_cost.hpp).\n"
              "Peaks: %s %.0f GB/s, %u CUs (%u SIMDs), %.2f GHz; %s %.0f GB/s, %u CUs (%u SIMDs), %.2f GHz.\n"
              "Counters from tg's emulated GPU running the kernels' machine code (gfx1100 and gfx1200), default opts:\n"
              "%s\n\n",
              rx_7900_xtx.name, rx_7900_xtx.bytes_per_second / 1e9, rx_7900_xtx.compute_units, rx_7900_xtx.simds(),
              rx_7900_xtx.clock_hz / 1e9, rx_9070_xt.name, rx_9070_xt.bytes_per_second / 1e9, rx_9070_xt.compute_units,
              rx_9070_xt.simds(), rx_9070_xt.clock_hz / 1e9, what);
}

}  // namespace tg::bench
