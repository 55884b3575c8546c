// cpu_target.cpp: the host's features from LLVM (llvm/TargetParser/Host.h), capped by level.
#include "drivers/cpu/cpu_target.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <cstdlib>
#include <tg/core/error.hpp>

namespace tg::cpu {
namespace {

const std::vector<std::string> level_names = {"avx2", "avx512", "avx512vnni", "native"};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Whether a level keeps a feature the host has. Features outside the vector extensions
// (popcnt, bmi2, ...) stay at every level; the cap removes the wider vector ISAs.
bool level_keeps(const std::string& level, const std::string& f) {
  if (level == "native") return true;
  const bool avx512_base = f == "avx512f" || f == "avx512cd" || f == "avx512bw" || f == "avx512dq" || f == "avx512vl";
  const bool wide = starts_with(f, "avx512") || starts_with(f, "avxvnni") || starts_with(f, "amx") ||
                    starts_with(f, "avx10") || f == "avxifma" || f == "avxneconvert" || f == "evex512";
  if (!wide) return true;
  if (level == "avx2") return false;
  if (f == "evex512") return true;  // 512-bit EVEX encodings, needed by every AVX-512 level
  if (level == "avx512") return avx512_base;
  return avx512_base || f == "avx512vnni";  // avx512vnni
}

}  // namespace

std::vector<std::string> host_levels() {
  const llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  auto has = [&](const char* f) { auto it = host.find(f); return it != host.end() && it->second; };
  std::vector<std::string> levels;
  if (has("avx2") && has("fma")) levels.push_back("avx2");
  if (has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq") && has("avx512cd")) levels.push_back("avx512");
  if (levels.size() == 2 && has("avx512vnni")) levels.push_back("avx512vnni");
  levels.push_back("native");
  return levels;
}

cpu_target detect_cpu_target(const std::string& requested) {
  std::string level = requested;
  if (level.empty()) {
    const char* env = std::getenv("TG_CPU_FEATURES");
    level = env != nullptr && *env != '\0' ? env : "native";
  }
  if (std::find(level_names.begin(), level_names.end(), level) == level_names.end())
    throw usage_error(str("TG_CPU_FEATURES=", level, ": not a level (avx2, avx512, avx512vnni or native)"));
  const auto levels = host_levels();
  if (std::find(levels.begin(), levels.end(), level) == levels.end())
    throw usage_error(str("TG_CPU_FEATURES=", level, ": this CPU (", llvm::sys::getHostCPUName().str(),
                          ") cannot run it; it runs ", levels.front(), " up to native"));
  cpu_target t;
  t.level = level;
  t.cpu = llvm::sys::getHostCPUName().str();
  bool avx2 = false, avx512bw = false, avx512vl = false, avx512vnni = false, avxvnni = false;
  for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
    const std::string f = entry.getKey().str();
    const bool on = entry.getValue() && level_keeps(level, f);
    t.features.push_back((on ? "+" : "-") + f);
    if (!on) continue;
    avx2 |= f == "avx2", avx512bw |= f == "avx512bw", avx512vl |= f == "avx512vl";
    avx512vnni |= f == "avx512vnni", avxvnni |= f == "avxvnni";
    t.f16c |= f == "f16c", t.avx512_bf16 |= f == "avx512bf16", t.avx512_fp16 |= f == "avx512fp16";
  }
  t.vector_bits = avx512bw ? 512 : avx2 ? 256 : 128;
  t.vector_registers = avx512bw ? 32 : 16;
  t.vnni = (avx512vnni && avx512vl) || avxvnni;
  // LLVM's X86 tuning flag fast-dpwssd (llvm/lib/Target/X86/X86.td, TuningFastDPWSSD) is off
  // for most CPUs, and then the machine combiner splits a vpdpwssd whose accumulator chain it
  // sees unrolled back into vpmaddwd + vpaddd (measured: the prefill tile kernel of Q6_K, fully
  // unrolled, had no vpdpwssd left; with the flag, 56 of 64). With VNNI the fused form is what
  // we want everywhere, so ask for it.
  if (t.vnni) t.features.push_back("+fast-dpwssd");
  // Zen 4 and Zen 5 stream decode's weights faster without the prefetch hints. A one-token Q8_0
  // matvec from 32-row tiles (matvec_types_bench, 256 MB, 2 threads, EPYC Genoa) read 20-26 GB/s
  // with the 17 lines of each 1088-byte step asked for 2 KiB ahead and 29-34 without; asking for
  // 1-3 lines a step was no better than none. On Zen 5 (EPYC Turin, 2 vCPUs, interleaved runs)
  // without them: Q4_K 42-46 -> 45-50 GB/s, Q5_K 42-49 -> 46-51, and the 1B-shaped models' decode
  // Q8_0 34.6-41.9 -> 42.7-47.4 tok/s, Q4_K_M 40.3-47.1 -> 39.5-48.2. Zen 3 measured the opposite
  // for the file layout (29 -> 38-40 GB/s with them), and no other CPU has been measured without
  // them, so they stay on elsewhere. TG_CPU_PREFETCH=on|off overrides (to measure a new CPU).
  t.software_prefetch = t.cpu != "znver4" && t.cpu != "znver5";
  if (const char* p = std::getenv("TG_CPU_PREFETCH"); p != nullptr && *p != '\0') {
    const std::string v = p;
    if (v != "on" && v != "off") throw usage_error("TG_CPU_PREFETCH=" + v + ": give on or off");
    t.software_prefetch = v == "on";
  }
  std::sort(t.features.begin(), t.features.end());
  return t;
}

const cpu_target& host_cpu_target() {
  static const cpu_target target = detect_cpu_target();
  return target;
}

codegen::x86_isa cpu_target::isa() const { return {vector_bits >= 256 ? vector_bits : 0, vnni, software_prefetch}; }

std::string cpu_target::describe() const {
  return str(level, " (", cpu, "): ", vector_bits, "-bit vectors, ", vector_registers, " registers, int8 dot ",
             vnni ? "vpdpwssd" : "vpmaddwd+vpaddd", ", fp16 ", avx512_fp16 ? "avx512fp16" : f16c ? "vcvtph2ps" : "scalar",
             ", bf16 ", avx512_bf16 ? "vcvtneps2bf16" : "shifts", software_prefetch ? "" : ", no software prefetch");
}

}  // namespace tg::cpu
