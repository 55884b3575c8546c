// memfd_mapping.cpp: memfd_create + ftruncate + mmap, each failure a device_error (see memfd_mapping.hpp).
#include "drivers/emu/memfd_mapping.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <tg/core/error.hpp>

namespace tg::emu {

namespace {

[[noreturn]] void fail(const char* what, const char* name, std::uint64_t size_bytes, int err) {
  throw device_error(str("emu: ", what, " for ", name, " (", size_bytes, " bytes) failed: ", std::strerror(err)));
}

}  // namespace

memfd_mapping::memfd_mapping(const char* name, std::uint64_t size_bytes) : size_(size_bytes) {
  if (size_bytes == 0) throw usage_error(str("emu: ", name, " of 0 bytes"));
  fd_ = ::memfd_create(name, MFD_CLOEXEC);
  if (fd_ < 0) fail("memfd_create", name, size_bytes, errno);
  if (::ftruncate(fd_, off_t(size_bytes)) != 0) {
    int err = errno;
    ::close(fd_);
    fail("ftruncate", name, size_bytes, err);
  }
  void* p = ::mmap(nullptr, size_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    ::close(fd_);
    fail("mmap", name, size_bytes, err);
  }
  data_ = static_cast<std::byte*>(p);
}

memfd_mapping::~memfd_mapping() {
  ::munmap(data_, size_);
  ::close(fd_);
}

}  // namespace tg::emu
