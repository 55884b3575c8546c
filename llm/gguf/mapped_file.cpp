// mapped_file.cpp: mmap(2) wrapper for reading model files without copying them.
#include "llm/gguf/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include <tg/core/error.hpp>

namespace tg::gguf {

namespace {

// Closes the descriptor on every path out of the constructor; the mapping outlives it.
struct fd_guard {
  int fd;
  ~fd_guard() { ::close(fd); }
};

}  // namespace

mapped_file::mapped_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw usage_error(str("gguf: cannot open ", path.string(), ": ", std::strerror(errno)));
  const fd_guard guard{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw device_error(str("gguf: fstat of ", path.string(), " failed: ", std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw usage_error(str("gguf: ", path.string(), " is not a regular file"));
  size_ = static_cast<std::size_t>(st.st_size);
  // mmap rejects a zero length; an empty file is reported by the parser as truncated.
  if (size_ == 0) return;
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    size_ = 0;
    throw device_error(str("gguf: mmap of ", path.string(), " (", st.st_size,
                           " bytes) failed: ", std::strerror(err)));
  }
  data_ = static_cast<const std::byte*>(p);
}

mapped_file::mapped_file(mapped_file&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

mapped_file& mapped_file::operator=(mapped_file&& other) noexcept {
  if (this != &other) {
    unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

mapped_file::~mapped_file() { unmap(); }

void mapped_file::release(std::span<const std::byte> range) const noexcept {
  if (data_ == nullptr || range.data() < data_ || range.data() + range.size() > data_ + size_) return;
  const auto page = std::uintptr_t(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = (std::uintptr_t(range.data()) + page - 1) / page * page;
  const std::uintptr_t end = std::uintptr_t(range.data() + range.size()) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void mapped_file::unmap() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace tg::gguf
