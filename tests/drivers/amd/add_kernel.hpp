// add_kernel.hpp: kernels/<name>.ll built at test time with llc-19 and ld.lld-19 (TG_LLC, TG_LLD and
// TG_AMD_KERNELS name them) into a code object, and the host twin of kernels/add.ll's `add` for the
// AMD:EMU backend (drivers/emu/emu_device), which runs host twins until tg emits AMDGPU code.
// Include after <doctest/doctest.h>.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "drivers/emu/dispatch.hpp"

namespace tg::test {

inline std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

inline bool run_quietly(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

// kernels/<name>.ll built for `mcpu` ("gfx1100", "gfx1200") into a shared object; empty when the
// tools are not there.
inline std::vector<std::byte> build_kernel(const std::string& name, const std::string& mcpu) {
  namespace fs = std::filesystem;
  const std::string llc = env_or("TG_LLC", "llc-19"), lld = env_or("TG_LLD", "ld.lld-19");
  const fs::path kernels = env_or("TG_AMD_KERNELS", "");
  if (kernels.empty() || !run_quietly(llc + " --version") || !run_quietly(lld + " --version")) return {};
  const fs::path dir = fs::temp_directory_path() / ("tg_" + name + "_kernel_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path obj = dir / (name + "_" + mcpu + ".o"), so = dir / (name + "_" + mcpu + ".so");
  const std::string q = "'";
  REQUIRE(run_quietly(llc + " -mtriple=amdgcn-amd-amdhsa -mcpu=" + mcpu + " -filetype=obj -o " + q + obj.string() + q +
                      " " + q + (kernels / (name + ".ll")).string() + q));
  REQUIRE(run_quietly(lld + " -shared " + q + obj.string() + q + " -o " + q + so.string() + q));
  std::ifstream in(so, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), {});
  fs::remove_all(dir);
  std::vector<std::byte> bytes(c.size());
  std::memcpy(bytes.data(), c.data(), c.size());
  return bytes;
}

inline std::vector<std::byte> build_add(const std::string& mcpu) { return build_kernel("add", mcpu); }

// The host twin of kernels/add.ll's `add`: out[i] = a[i] + b[i] for every thread of the grid.
inline void add_twin(emu::dispatch_context& ctx) {
  const auto out = ctx.kernarg<emu::gpu_va>(0), a = ctx.kernarg<emu::gpu_va>(8), b = ctx.kernarg<emu::gpu_va>(16);
  const std::uint64_t threads = std::uint64_t(ctx.workgroups()[0]) * ctx.workgroup_size()[0];
  for (std::uint64_t i = 0; i < threads; ++i) ctx.store(out + 4 * i, ctx.load<float>(a + 4 * i) + ctx.load<float>(b + 4 * i));
}

}  // namespace tg::test
