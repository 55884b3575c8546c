// emu_sysmem.cpp: fake bus addresses for host pages, and the system bus over them (see emu_sysmem.hpp).
#include "drivers/emu/pci/emu_sysmem.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "runtime/transport/pci/host_dma_region.hpp"
#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::emu {

// One allocation: anonymous host pages, each registered with the emu_sysmem while it lives.
class emu_dma_region final : public transport::dma_region {
 public:
  emu_dma_region(std::shared_ptr<emu_sysmem> owner, std::uint64_t bytes) : owner_(std::move(owner)), size_(bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw device_error(str("emu pci: mmap of ", bytes, " bytes of DMA memory failed: ", std::strerror(errno)));
    base_ = static_cast<std::byte*>(p);
    for (std::uint64_t off = 0; off < bytes; off += emu_sysmem::page_bytes) pages_.push_back(owner_->map_page(base_ + off));
  }
  ~emu_dma_region() override {
    owner_->unmap_pages(pages_);  // first, so the GPU can no longer reach the memory
    ::munmap(base_, size_);
  }

  std::uint64_t size() const override { return size_; }
  std::vector<std::uint64_t> page_bus_addresses() const override { return pages_; }
  void read(std::uint64_t offset, std::span<std::byte> out) override {
    transport::pci::check_dma_access("emu pci", size_, offset, out.size(), "read");
    std::memcpy(out.data(), base_ + offset, out.size());
  }
  void write(std::uint64_t offset, std::span<const std::byte> in) override {
    transport::pci::check_dma_access("emu pci", size_, offset, in.size(), "write");
    std::memcpy(base_ + offset, in.data(), in.size());
  }
  std::byte* mapping() override { return base_; }

 private:
  std::shared_ptr<emu_sysmem> owner_;
  std::byte* base_ = nullptr;
  std::uint64_t size_;
  std::vector<std::uint64_t> pages_;
};

std::unique_ptr<transport::dma_region> emu_sysmem::allocate(std::uint64_t bytes) {
  transport::pci::check_dma_size("emu pci", bytes);
  return std::make_unique<emu_dma_region>(shared_from_this(), bytes);
}

std::uint64_t emu_sysmem::map_page(std::byte* host) {
  std::lock_guard guard(mutex_);
  const std::uint64_t bus = next_;
  next_ += 2 * page_bytes;  // leave a hole: consecutive pages are never contiguous on the bus
  pages_.emplace(bus, host);
  return bus;
}

void emu_sysmem::unmap_pages(const std::vector<std::uint64_t>& bus_pages) {
  std::lock_guard guard(mutex_);
  for (std::uint64_t p : bus_pages) pages_.erase(p);
}

std::size_t emu_sysmem::mapped_pages() const {
  std::lock_guard guard(mutex_);
  return pages_.size();
}

template <class Copy>
void emu_sysmem::access(std::uint64_t bus_address, std::uint64_t bytes, const char* op, Copy copy) {
  std::lock_guard guard(mutex_);  // held across the copy: a region cannot be freed under it
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t at = bus_address + done;
    const auto page = pages_.find(at & ~(page_bytes - 1));
    if (page == pages_.end())
      throw device_error(str("emu pci: system bus ", op, " of ", bytes, " bytes at ", hex{bus_address},
                             " reaches ", hex{at}, ", which is in no DMA allocation"));
    const std::uint64_t in_page = at % page_bytes, n = std::min(bytes - done, page_bytes - in_page);
    copy(page->second + in_page, done, n);
    done += n;
  }
}

void emu_sysmem::read(std::uint64_t bus_address, std::span<std::byte> out) {
  access(bus_address, out.size(), "read",
         [&](std::byte* host, std::uint64_t done, std::uint64_t n) { std::memcpy(out.data() + done, host, n); });
}

void emu_sysmem::write(std::uint64_t bus_address, std::span<const std::byte> in) {
  access(bus_address, in.size(), "write",
         [&](std::byte* host, std::uint64_t done, std::uint64_t n) { std::memcpy(host, in.data() + done, n); });
}

}  // namespace tg::emu
