// add_kernel.hpp: kernels/<name>.ll built at test time with llc-19 and ld.lld-19 (TG_LLC, TG_LLD and
// TG_AMD_KERNELS name them) into a code object, which the emulated GPU runs as machine code.
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

}  // namespace tg::test
