// host_dma_region.cpp: locked host pages and their pagemap addresses (see host_dma_region.hpp).
#include "runtime/transport/pci/host_dma_region.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/transport/pci/pci_text.hpp"
#include <tg/core/error.hpp>

namespace tg::transport::pci {

namespace {

constexpr std::uint64_t page_bytes = 4096;
// /proc/self/pagemap entry (Documentation/admin-guide/mm/pagemap.rst): bit 63 present,
// bits 54:0 the page frame number.
constexpr std::uint64_t pagemap_present = 1ull << 63;
constexpr std::uint64_t pagemap_pfn_mask = (1ull << 55) - 1;

}  // namespace

void check_dma_size(const char* what, std::uint64_t bytes) {
  if (bytes == 0 || bytes % page_bytes != 0)
    throw usage_error(str(what, ": DMA allocation of ", bytes, " bytes is not a positive multiple of 4 KiB"));
}

void check_dma_access(const char* what, std::uint64_t region_size, std::uint64_t offset, std::uint64_t bytes,
                      const char* op) {
  if (offset > region_size || bytes > region_size - offset)
    throw usage_error(str(what, ": ", op, " of ", bytes, " bytes at ", hex{offset}, " leaves the DMA region [0, ",
                          hex{region_size}, ")"));
}

host_dma_region::host_dma_region(std::uint64_t bytes, const std::string& pagemap_path) : size_(bytes) {
  check_dma_size("pci", bytes);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) throw device_error(str("pci: mmap of ", bytes, " bytes of DMA memory failed: ", std::strerror(errno)));
  base_ = static_cast<std::byte*>(p);
  // Locked pages are never swapped out or migrated, so the GPU's view stays valid.
  if (::mlock(p, bytes) != 0) {
    const int err = errno;
    ::munmap(p, bytes);
    throw device_error(str("pci: mlock of ", bytes, " bytes of DMA memory failed: ", std::strerror(err),
                           " (raise RLIMIT_MEMLOCK: ulimit -l, or run as root)"));
  }
  ::madvise(p, bytes, MADV_DONTFORK);
  try {
    read_pagemap(pagemap_path);
  } catch (...) {
    ::munmap(p, bytes);
    throw;
  }
}

host_dma_region::~host_dma_region() { ::munmap(base_, size_); }

void host_dma_region::read_pagemap(const std::string& pagemap_path) {
  const int fd = ::open(pagemap_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw device_error(str("pci: opening ", pagemap_path, " failed: ", std::strerror(errno)));
  const std::uint64_t first = reinterpret_cast<std::uintptr_t>(base_) / page_bytes;
  std::vector<std::uint64_t> entries(size_ / page_bytes);
  const ssize_t n = ::pread(fd, entries.data(), entries.size() * 8, off_t(first * 8));
  const int err = errno;
  ::close(fd);
  if (n != ssize_t(entries.size() * 8))
    throw device_error(str("pci: reading ", entries.size(), " entries of ", pagemap_path, " at page ", hex{first},
                           " failed: ", n < 0 ? std::strerror(err) : "short read"));
  pages_.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::uint64_t pfn = entries[i] & pagemap_pfn_mask;
    if (!(entries[i] & pagemap_present) || pfn == 0)
      throw device_error(str("pci: ", pagemap_path, " gives no physical address (PFN 0) for locked page ", i,
                             " at ", hex{reinterpret_cast<std::uintptr_t>(base_) + i * page_bytes},
                             ": reading physical addresses needs CAP_SYS_ADMIN; run as root"));
    pages_.push_back(pfn * page_bytes);
  }
}

void host_dma_region::check(std::uint64_t offset, std::uint64_t bytes, const char* op) const {
  check_dma_access("pci", size_, offset, bytes, op);
}

void host_dma_region::read(std::uint64_t offset, std::span<std::byte> out) {
  check(offset, out.size(), "read");
  std::memcpy(out.data(), base_ + offset, out.size());
}

void host_dma_region::write(std::uint64_t offset, std::span<const std::byte> in) {
  check(offset, in.size(), "write");
  std::memcpy(base_ + offset, in.data(), in.size());
}

}  // namespace tg::transport::pci
