// emu_sysmem.hpp: host memory the emulated GPU reaches as system memory, with made-up bus
// addresses: the emulated PCI host's stand-in for locked pages and /proc/self/pagemap
// (Linux Documentation/admin-guide/mm/pagemap.rst).
//
// Each 4 KiB page of an allocation gets its own bus address, counted up from 0x1'0000'0000 with
// a one-page gap after every page, so no two pages are contiguous on the bus: a driver that
// assumed contiguity would fault here as it might on hardware. The same object is the
// emu::system_bus that resolves those addresses for the GPU's engines.
//
//   auto mem = std::make_shared<tg::emu::emu_sysmem>();
//   gpu.attach_system_bus(mem.get());
//   std::unique_ptr<tg::transport::dma_region> r = mem->allocate(64 << 10);
//   mem->read(r->page_bus_addresses()[1] + 8, out);        // what the GPU sees of page 1
//
// Thread-safe: allocations come from the driver's thread, bus accesses from the GPU's worker;
// one mutex guards the page table. A region may outlive the emu_sysmem (it keeps it alive).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "drivers/emu/system_bus.hpp"
#include "runtime/transport/transport.hpp"

namespace tg::emu {

class emu_sysmem final : public system_bus, public std::enable_shared_from_this<emu_sysmem> {
 public:
  static constexpr std::uint64_t first_bus_address = 0x1'0000'0000;
  static constexpr std::uint64_t page_bytes = 4096;

  // `bytes`: a positive multiple of 4 KiB (usage_error otherwise). Needs the emu_sysmem to be
  // owned by a shared_ptr.
  std::unique_ptr<transport::dma_region> allocate(std::uint64_t bytes);

  // system_bus: device_error naming the address when it is not in a live allocation.
  void read(std::uint64_t bus_address, std::span<std::byte> out) override;
  void write(std::uint64_t bus_address, std::span<const std::byte> in) override;

  std::size_t mapped_pages() const;

 private:
  friend class emu_dma_region;
  std::uint64_t map_page(std::byte* host);
  void unmap_pages(const std::vector<std::uint64_t>& bus_pages);
  template <class Copy>
  void access(std::uint64_t bus_address, std::uint64_t bytes, const char* op, Copy copy);

  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::byte*> pages_;  // bus page address -> host page
  std::uint64_t next_ = first_bus_address;
};

}  // namespace tg::emu
