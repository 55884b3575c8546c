// host_dma_region.hpp: host memory a PCI GPU reaches by DMA: anonymous shared pages, populated
// and locked so they never move, with each page's physical address from /proc/self/pagemap
// (tinygrad/runtime/support/system.py: PCIDevice.alloc_sysmem; without an IOMMU the physical
// address is the bus address).
//
//   host_dma_region r(64 << 10, "/proc/self/pagemap");
//   std::vector<std::uint64_t> pages = r.page_bus_addresses();  // for SYS PTEs
//   std::memcpy(r.mapping(), data, n);
//
// Errors: usage_error for a size that is not a positive multiple of 4 KiB; device_error when the
// memory cannot be mapped or locked (RLIMIT_MEMLOCK) or pagemap gives PFN 0 (no CAP_SYS_ADMIN).
// Not thread-safe; the memory itself may be shared with the GPU at any time.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/transport/transport.hpp"

namespace tg::transport::pci {

class host_dma_region final : public dma_region {
 public:
  host_dma_region(std::uint64_t bytes, const std::string& pagemap_path);
  ~host_dma_region() override;
  host_dma_region(const host_dma_region&) = delete;
  host_dma_region& operator=(const host_dma_region&) = delete;

  std::uint64_t size() const override { return size_; }
  std::vector<std::uint64_t> page_bus_addresses() const override { return pages_; }
  void read(std::uint64_t offset, std::span<std::byte> out) override;
  void write(std::uint64_t offset, std::span<const std::byte> in) override;
  std::byte* mapping() override { return base_; }

 private:
  void check(std::uint64_t offset, std::uint64_t bytes, const char* op) const;
  void read_pagemap(const std::string& pagemap_path);

  std::byte* base_ = nullptr;
  std::uint64_t size_ = 0;
  std::vector<std::uint64_t> pages_;
};

// The checks every dma_region shares: usage_error when [offset, offset + bytes) leaves the region.
void check_dma_access(const char* what, std::uint64_t region_size, std::uint64_t offset, std::uint64_t bytes,
                      const char* op);
// usage_error unless bytes is a positive multiple of 4 KiB.
void check_dma_size(const char* what, std::uint64_t bytes);

}  // namespace tg::transport::pci
