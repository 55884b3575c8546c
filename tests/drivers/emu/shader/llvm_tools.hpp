// llvm_tools.hpp: LLVM 19's command-line tools at test time (llc-19, llvm-mc-19, ld.lld-19,
// llvm-objdump-19; TG_LLC, TG_LLVM_MC, TG_LLD, TG_OBJDUMP override them), for the interpreter's tests:
// IR or assembly -> a linked code object, and its disassembly. Tests exit 77 (skipped) without them.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace tg::emu::test {

inline std::string tool(const char* env, const char* fallback) {
  const char* v = std::getenv(env);
  return v && *v ? v : fallback;
}
inline std::string llc() { return tool("TG_LLC", "llc-19"); }
inline std::string llvm_mc() { return tool("TG_LLVM_MC", "llvm-mc-19"); }
inline std::string lld() { return tool("TG_LLD", "ld.lld-19"); }
inline std::string objdump() { return tool("TG_OBJDUMP", "llvm-objdump-19"); }

inline bool run_quietly(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

// Every tool answers --version.
inline bool have_llvm_tools() {
  return run_quietly(llc() + " --version") && run_quietly(llvm_mc() + " --version") &&
         run_quietly(lld() + " --version") && run_quietly(objdump() + " --version");
}

inline std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

inline std::vector<std::byte> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::byte> out(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) out[i] = std::byte(c[i]);
  return out;
}

// A scratch directory removed at the end of the test.
class temp_dir {
 public:
  temp_dir() : path_(std::filesystem::temp_directory_path() / ("tg_shader_" + std::to_string(::getpid()) + "_" +
                                                               std::to_string(counter()++))) {
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path path_;
};

// `source` (.ll, or .s when `assembly`) for `mcpu` -> a shared code object (ld.lld -shared), its path.
inline std::filesystem::path build_code_object(const temp_dir& dir, const std::filesystem::path& source,
                                               const std::string& mcpu, bool assembly = false) {
  const auto obj = dir.path() / (source.stem().string() + "." + mcpu + ".o");
  const auto so = dir.path() / (source.stem().string() + "." + mcpu + ".so");
  const std::string compile =
      assembly ? llvm_mc() + " -triple=amdgcn-amd-amdhsa -mcpu=" + mcpu + " -filetype=obj -o " + quoted(obj) + " " + quoted(source)
               : llc() + " -mtriple=amdgcn-amd-amdhsa -mcpu=" + mcpu + " -O3 -filetype=obj -o " + quoted(obj) + " " + quoted(source);
  if (!run_quietly(compile)) throw std::runtime_error("failed: " + compile);
  if (!run_quietly(lld() + " -shared " + quoted(obj) + " -o " + quoted(so))) throw std::runtime_error("ld.lld failed on " + obj.string());
  return so;
}

// The output of a command.
inline std::string capture(const std::string& cmd) {
  std::string out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (!f) throw std::runtime_error("popen failed: " + cmd);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  if (::pclose(f) != 0) throw std::runtime_error("failed: " + cmd);
  return out;
}

}  // namespace tg::emu::test
