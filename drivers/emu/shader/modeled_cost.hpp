// modeled_cost.hpp: the modeled time of one GPU dispatch from the emulated GPU's counters
// (interpreter.hpp: dispatch_counters), for cards tg has not run on yet. The roofline benches
// (tests/bench/gpu_roofline*) print it per kernel, and BEAM on AMD:EMU ranks its candidates by it
// (drivers/emu/emu_tuning.cpp), since the interpreter's own wall time says nothing of a card's.
//
// It is a model, fixed before any kernel is tuned against it (issue 13), not a measurement:
//
//   time = max(memory, issue, latency) + dispatch
//   memory   = bytes in the distinct 128-byte lines the dispatch touched / the card's DRAM bandwidth
//              (every line comes from DRAM once: as if the L2 held the dispatch's data)
//   issue    = VALU wave-instructions on the busiest SIMD / the clock; the waves are spread evenly
//              over the card's SIMDs (2 per CU, one VALU wave-instruction per clock each, dual
//              issue and VOPD not counted), so a dispatch with fewer waves than SIMDs pays for
//              the SIMDs it leaves idle
//   latency  = the memory waits of the wave that had most (a wait that found one of its vector
//              loads in flight) x 500 ns, times the rounds of waves the busiest SIMD runs (its waves
//              / the waves its VGPRs let it hold at once): what too few loads in flight cost
//   dispatch = a fixed 2 us per dispatch (no card measured yet)
//
// The issue's first model had only memory and issue; the latency term was added before any kernel
// was tuned, because without it a matvec with one row per lane (128 waves, one load in flight per
// wave) modeled at 97% of bandwidth. 500 ns is our assumption for a load that misses to DRAM
// (published pointer-chasing measurements of RDNA3 VRAM latency are in the 500-600 ns range).
//
// What it leaves out, each of which only makes a real card slower: scalar, LDS and memory
// instructions' issue slots, cache misses beyond the first touch, LDS limits on occupancy, and
// clocks below the boost clock.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include <string_view>

#include "drivers/emu/shader/interpreter.hpp"

namespace tg::emu::shader {

// Peak figures from AMD's product pages (boost clock; memory bandwidth = data rate x bus width).
struct card_model {
  const char* name;
  const char* target;      // the LLVM processor
  double bytes_per_second;  // DRAM
  unsigned compute_units;
  double clock_hz;
  unsigned simds() const { return compute_units * 2; }
};

inline constexpr card_model rx_7900_xtx{"RX 7900 XTX", "gfx1100", 960e9, 96, 2.5e9};   // 20 Gbps x 384 bit
inline constexpr card_model rx_9070_xt{"RX 9070 XT", "gfx1201", 640e9, 64, 2.97e9};    // 20 Gbps x 256 bit
inline constexpr double dispatch_seconds = 2e-6;
inline constexpr double memory_latency_seconds = 500e-9;
inline constexpr unsigned line_bytes = 128;

// The card whose peaks model an emulated processor: the RX 7900 XTX for gfx11 processors and the
// RX 9070 XT for gfx12 ones (the two cards with figures here; gfx1101 and gfx1200 are modeled as
// their generation's, so their modeled times rank schedules but are not those cards' times).
inline const card_model& modeled_card_for(std::string_view processor) {
  return processor.starts_with("gfx12") ? rx_9070_xt : rx_7900_xtx;
}

struct modeled_dispatch {
  double memory_s = 0, issue_s = 0, latency_s = 0, total_s = 0;
  const char* bound() const {
    if (latency_s > memory_s && latency_s > issue_s) return "latency";
    return memory_s >= issue_s ? "memory" : "issue";
  }
  // The share of the card's DRAM bandwidth the dispatch uses over its modeled time.
  double bandwidth_share() const { return total_s > 0 ? memory_s / total_s : 0; }
};

inline modeled_dispatch model(const card_model& card, const dispatch_counters& k) {
  modeled_dispatch m;
  m.memory_s = double(k.global_lines) * line_bytes / card.bytes_per_second;
  if (k.waves > 0) {
    const double per_wave = double(k.valu) / double(k.waves);
    const std::uint64_t waves_on_busiest = (k.waves + card.simds() - 1) / card.simds();
    m.issue_s = per_wave * double(waves_on_busiest) / card.clock_hz;
    const std::uint64_t resident = std::max(1u, k.waves_per_simd);
    const std::uint64_t rounds = (waves_on_busiest + resident - 1) / resident;
    m.latency_s = double(k.max_wave_memory_waits) * memory_latency_seconds * double(rounds);
  }
  m.total_s = std::max({m.memory_s, m.issue_s, m.latency_s}) + dispatch_seconds;
  return m;
}

}  // namespace tg::emu::shader
