// usb_sram.cpp: the SRAM allocator, DMA regions and the staging window over the bridge SRAM
// (tinygrad/runtime/ops_amd.py: USBIface, AMDAllocator._copyin and _copyout).
//
//   region.write(0, bytes);
//
// Not thread-safe.
#include "runtime/transport/usb/usb_sram.hpp"

#include <array>

#include "runtime/transport/usb/bridge_requests.hpp"
#include "runtime/transport/usb/sram.hpp"
#include "runtime/transport/usb/xdata.hpp"
#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::transport::usb {
namespace {

constexpr std::uint64_t page_bytes = 4096;

// sys_buf (USBIface.__init__): XDATA 0xA000 <-> PCIe 0x820000; the copy-in drain fence is the u64
// at +0x800 (AMDAllocator._copyin).
constexpr std::uint16_t xdata_sys_buf = 0xA000;
constexpr std::uint64_t sys_buf_bus_address = 0x820000;
constexpr std::uint64_t copy_fence_offset = 0x800;

// The part of the SRAM that XDATA requests reach: XDATA 0xF000..0xFFFF.
constexpr std::uint64_t xdata_sram_bytes = 0x10000 - xdata_sram;

void require_xdata_reach(const usb_device& dev, const char* what, std::uint64_t sram_offset, std::uint64_t bytes) {
  if (sram_offset + bytes > xdata_sram_bytes)
    throw usage_error(str(dev.name(), ": DMA ", what, " of ", bytes, " bytes at SRAM offset ", upper_hex(sram_offset),
                          ": the host reaches the SRAM byte-wise only in its first 4 KiB; start bulk writes on a "
                          "16 KiB slot, and read larger data through the staging window"));
}

}  // namespace

std::uint64_t sram_allocator::allocate(const std::string& device_name, std::uint64_t bytes) {
  if (bytes == 0 || bytes % page_bytes != 0)
    throw usage_error(str(device_name, ": DMA allocation of ", bytes, " bytes: must be a positive multiple of 4 KiB"));
  std::uint64_t gap_start = 0;
  for (auto it = taken_.begin();; ++it) {
    const std::uint64_t gap_end = it == taken_.end() ? sram_bytes : it->first;
    if (gap_end - gap_start >= bytes) {
      taken_.emplace(gap_start, bytes);
      return gap_start;
    }
    if (it == taken_.end()) break;
    gap_start = it->first + it->second;
  }
  throw device_error(str(device_name, ": bridge SRAM exhausted: asked for ", bytes, " bytes, ", sram_bytes - used(),
                         " of ", sram_bytes, " free but no gap that large (DMA memory and the staging window share "
                         "the SRAM; release DMA regions you no longer need)"));
}

void sram_allocator::release(std::uint64_t offset, std::uint64_t generation) {
  if (generation == generation_) taken_.erase(offset);
}

void sram_allocator::reset() {
  taken_.clear();
  ++generation_;
}

std::uint64_t sram_allocator::used() const {
  std::uint64_t n = 0;
  for (const auto& [offset, bytes] : taken_) n += bytes;
  return n;
}

usb_dma_region::usb_dma_region(usb_device& dev, std::shared_ptr<sram_allocator> sram, std::uint64_t bytes)
    : dev_(&dev), sram_(std::move(sram)), sram_offset_(sram_->allocate(dev.name(), bytes)), size_(bytes),
      generation_(sram_->generation()) {}

usb_dma_region::~usb_dma_region() { sram_->release(sram_offset_, generation_); }

std::vector<std::uint64_t> usb_dma_region::page_bus_addresses() const {
  std::vector<std::uint64_t> pages;
  for (std::uint64_t o = 0; o < size_; o += page_bytes) pages.push_back(sram_bus_address + sram_offset_ + o);
  return pages;
}

void usb_dma_region::check(const char* what, std::uint64_t offset, std::uint64_t bytes) const {
  if (offset > size_ || bytes > size_ - offset)
    throw usage_error(str(dev_->name(), ": DMA ", what, " of ", bytes, " bytes at offset ", upper_hex(offset),
                          " leaves the region (", size_, " bytes)"));
}

void usb_dma_region::read(std::uint64_t offset, std::span<std::byte> out) {
  check("read", offset, out.size());
  std::uint64_t at = sram_offset_ + offset;
  require_xdata_reach(*dev_, "read", at, out.size());
  read_xdata(*dev_, std::uint32_t(xdata_sram + at), out);
}

void usb_dma_region::write(std::uint64_t offset, std::span<const std::byte> in) {
  check("write", offset, in.size());
  std::uint64_t at = sram_offset_ + offset;
  std::size_t bulk = at % sram_slot_bytes == 0 ? in.size() / sram_sector_bytes * sram_sector_bytes : 0;
  if (bulk > 0) sram_write(*dev_, at, in.first(bulk));
  if (bulk == in.size()) return;
  require_xdata_reach(*dev_, "write", at + bulk, in.size() - bulk);
  write_xdata(*dev_, std::uint32_t(xdata_sram + at + bulk), in.subspan(bulk));
}

std::uint64_t usb_staging_window::bus_address() const { return sram_bus_address; }
std::uint64_t usb_staging_window::size() const { return sram_bytes; }
std::uint64_t usb_staging_window::release_bus_address() const { return sram_release_bus_address; }

std::uint64_t usb_staging_window::fence_bus_address() const { return sys_buf_bus_address + copy_fence_offset; }

std::uint64_t usb_staging_window::read_fence() {
  std::array<std::byte, 8> bytes{};
  read_xdata(*dev_, std::uint32_t(xdata_sys_buf + copy_fence_offset), bytes);
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) value |= std::uint64_t(bytes[i]) << (8 * i);  // little-endian
  return value;
}

void usb_staging_window::write(std::uint64_t offset, std::span<const std::byte> in) { sram_write(*dev_, offset, in); }

void usb_staging_window::arm_read(std::uint64_t offset, std::uint64_t bytes) {
  sram_arm_read(*dev_, offset, bytes);
  armed_bytes_ = bytes;
}

void usb_staging_window::finish_read(std::span<std::byte> out) {
  if (armed_bytes_ == 0 || out.size() != armed_bytes_)
    throw usage_error(str(dev_->name(), ": staging finish_read of ", out.size(), " bytes, but ",
                          armed_bytes_ == 0 ? std::string("no read is armed") : str(armed_bytes_, " bytes are armed")));
  armed_bytes_ = 0;  // the bridge streams an armed read once, whatever happens below
  sram_finish_read(*dev_, out);
}

}  // namespace tg::transport::usb
