// amdgpu_linker.cpp: lld's ELF driver, in process, on one object (see amdgpu_linker.hpp).
#include "runtime/codegen/amdgpu_linker.hpp"

#include <lld/Common/Driver.h>
#include <llvm/Support/raw_ostream.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <tg/core/error.hpp>

LLD_HAS_DRIVER(elf)

namespace tg::codegen {

namespace {

std::mutex lld_lock;          // lld's state is global: one link at a time
bool lld_unusable = false;    // set when lld says it cannot run again; under lld_lock

// A folder of our own under the system's temporary folder, removed with everything in it.
class scratch_folder {
 public:
  scratch_folder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tg-lld-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw device_error(str("amdgpu: cannot create a temporary folder from ", pattern, ": ", std::strerror(errno)));
    path_ = pattern;
  }
  ~scratch_folder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  scratch_folder(const scratch_folder&) = delete;
  scratch_folder& operator=(const scratch_folder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path& p, std::span<const std::byte> bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!out) throw device_error(str("amdgpu: cannot write ", p.string()));
}

std::vector<std::byte> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && !in) throw device_error(str("amdgpu: cannot read ", p.string()));
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

}  // namespace

std::vector<std::byte> link_amdgpu_object(std::span<const std::byte> object, const std::string& kernel) {
  scratch_folder folder;
  const std::string in = (folder.path() / "kernel.o").string(), out = (folder.path() / "kernel.co").string();
  write_file(in, object);
  // -shared: an amdhsa code object is a shared object (AMDGPUUsage "Code Object"); the same
  // command clang's HIP/OpenCL toolchain runs. --no-undefined: a tg kernel calls nothing outside
  // itself. One thread: the objects are a few KiB, and the caller may be on a thread pool already.
  const char* args[] = {"ld.lld", "-shared", "--no-undefined", "--threads=1", in.c_str(), "-o", out.c_str()};
  std::string messages;
  {
    std::lock_guard<std::mutex> guard(lld_lock);
    if (lld_unusable)
      throw device_error(str("amdgpu: cannot link kernel ", kernel,
                             ": lld recovered from a crash earlier in this process and cannot run again"));
    llvm::raw_string_ostream log(messages);
    const lld::Result r = lld::lldMain(args, log, log, {{lld::Gnu, &lld::elf::link}});
    lld_unusable = !r.canRunAgain;
    log.flush();
    if (r.retCode != 0)
      throw device_error(str("amdgpu: lld could not link kernel ", kernel, " (exit code ", r.retCode, "): ", messages));
  }
  return read_file(out);
}

}  // namespace tg::codegen
