// cpu_target.hpp: what the host CPU offers the kernels, detected once from LLVM's host
// feature map (llvm::sys::getHostCPUFeatures), optionally capped by TG_CPU_FEATURES.
//
// Levels, lowest first: avx2 (AVX2, FMA, F16C: Haswell and Zen), avx512 (AVX-512 F, CD, BW,
// DQ, VL: Skylake-SP), avx512vnni (plus VNNI: Cascade Lake), native (everything the host
// has). TG_CPU_FEATURES=<level> runs a lower level on a higher machine for tests and
// benchmarks: the JIT's target features drop what the level lacks, so LLVM cannot emit it.
// A level above the host's throws usage_error.
#pragma once
#include <string>
#include <vector>

#include "runtime/codegen/llvm_kernel.hpp"

namespace tg::cpu {

struct cpu_target {
  std::string level;          // the level in force: avx2, avx512, avx512vnni or native
  std::string cpu;            // LLVM's name for the host CPU (tuning)
  std::vector<std::string> features;  // +name / -name for the JIT, the level's cap applied
  int vector_bits = 0;        // 512 with AVX-512 BW, 256 with AVX2, else 128
  int vector_registers = 16;  // 32 with AVX-512
  bool vnni = false;          // AVX-512 VNNI (with VL) or AVX-VNNI: vpdpwssd / vpdpbusd
  bool f16c = false, avx512_bf16 = false, avx512_fp16 = false;  // 16-bit float conversions
  // Whether decode's weight stream is prefetched in software (the kernels' prefetch hints,
  // linear_kernels.cpp and matmul_tiles.cpp), by microarchitecture: the hardware prefetchers
  // differ, not the ISA, so every level of one host takes the same choice (cpu_target.cpp).
  bool software_prefetch = true;
  // What the codegen may name (llvm_kernel.hpp), and one line for logs: "avx512vnni: 512-bit
  // vectors, 32 registers, int8 dot vpdpwssd, fp16 vcvtph2ps".
  codegen::x86_isa isa() const;
  std::string describe() const;
};

// The levels this host can run, lowest first (tests run each).
std::vector<std::string> host_levels();
// The host's target at `level` ("" : TG_CPU_FEATURES, else native).
cpu_target detect_cpu_target(const std::string& level = "");
// The target this process's CPU device uses (TG_CPU_FEATURES read once).
const cpu_target& host_cpu_target();

}  // namespace tg::cpu
