// mapped_bar.cpp: BAR access through a shared mapping (see mapped_bar.hpp).
#include "runtime/transport/pci/mapped_bar.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "runtime/transport/pci/pci_text.hpp"
#include <tg/core/error.hpp>

namespace tg::transport::pci {

void check_bar_access(const std::string& what, std::uint64_t bar_size, std::uint64_t offset, std::uint64_t bytes,
                      std::uint64_t align, const char* op) {
  if (offset % align != 0 || bytes % 4 != 0)
    throw usage_error(str(what, ": ", op, " of ", bytes, " bytes at ", hex{offset}, " is not ", align,
                          "-byte aligned or not a multiple of 4 bytes"));
  if (offset > bar_size || bytes > bar_size - offset)
    throw usage_error(str(what, ": ", op, " of ", bytes, " bytes at ", hex{offset}, " leaves the BAR [0, ",
                          hex{bar_size}, ")"));
}

mapped_bar::mapped_bar(int fd, std::uint64_t size, bool dword_only, std::string what)
    : size_(size), dword_only_(dword_only), what_(std::move(what)) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    throw device_error(str(what_, ": mmap of ", hex{size}, " bytes failed: ", std::strerror(errno)));
  // A forked child (a compiler, a BEAM worker) must not inherit the BAR mapping (as
  // tinygrad/runtime/support/system.py: PCIDevice.map_bar does).
  ::madvise(p, size, MADV_DONTFORK);
  base_ = static_cast<std::byte*>(p);
}

mapped_bar::~mapped_bar() { ::munmap(base_, size_); }

void mapped_bar::check(std::uint64_t offset, std::uint64_t bytes, std::uint64_t align, const char* op) const {
  check_bar_access(what_, size_, offset, bytes, align, op);
}

std::uint32_t mapped_bar::read32(std::uint64_t offset) {
  check(offset, 4, 4, "read32");
  return *reinterpret_cast<volatile std::uint32_t*>(base_ + offset);
}

void mapped_bar::write32(std::uint64_t offset, std::uint32_t value) {
  check(offset, 4, 4, "write32");
  *reinterpret_cast<volatile std::uint32_t*>(base_ + offset) = value;
}

void mapped_bar::write64(std::uint64_t offset, std::uint64_t value) {
  check(offset, 8, 8, "write64");
  *reinterpret_cast<volatile std::uint64_t*>(base_ + offset) = value;
}

void mapped_bar::read(std::uint64_t offset, std::span<std::byte> out) {
  check(offset, out.size(), 4, "read");
  if (!dword_only_) {
    std::memcpy(out.data(), base_ + offset, out.size());
    return;
  }
  auto* src = reinterpret_cast<volatile std::uint32_t*>(base_ + offset);
  for (std::size_t i = 0; i < out.size() / 4; ++i) {
    const std::uint32_t v = src[i];
    std::memcpy(out.data() + 4 * i, &v, 4);
  }
}

void mapped_bar::write(std::uint64_t offset, std::span<const std::byte> in) {
  check(offset, in.size(), 4, "write");
  if (!dword_only_) {
    std::memcpy(base_ + offset, in.data(), in.size());
    return;
  }
  auto* dst = reinterpret_cast<volatile std::uint32_t*>(base_ + offset);
  for (std::size_t i = 0; i < in.size() / 4; ++i) {
    std::uint32_t v;
    std::memcpy(&v, in.data() + 4 * i, 4);
    dst[i] = v;
  }
}

}  // namespace tg::transport::pci
