// usb_sram.hpp: the bridge's 512 KiB SRAM as the transport hands it out: DMA regions from a
// first-fit allocator (a region gives its space back when destroyed), and the whole SRAM as the
// staging window with the copy-in fence in sys_buf (tinygrad/runtime/ops_amd.py: USBIface,
// AMDAllocator._copyin). The GPU sees SRAM offset o at PCIe 0x200000 + o.
//
//   auto sram = std::make_shared<sram_allocator>();
//   auto psp = std::make_unique<usb_dma_region>(dev, sram, 512 * 1024);   // freed when psp dies
//   usb_staging_window window(dev);
//   window.write(0, bytes);                    // 0xF2 + bulk OUT 0x02
//   window.arm_read(0, n); /* GPU copies, then stores at 0x82200C */ window.finish_read(out);
//   std::uint64_t done = window.read_fence();  // the u64 the GPU wrote at 0x820800 (0xE4)
//
// DMA regions and the staging window share the same SRAM: the driver uses DMA memory during boot
// (PSP firmware staging) and the window afterwards; nothing stops one from overwriting the other.
// Host access to a DMA region: writes from a 16 KiB slot boundary go in bulk (0xF2) in whole
// sectors, the remainder one 0xE5 request per byte; reads go through 0xE4. 0xE4/0xE5 reach only
// the SRAM's first 4 KiB (XDATA 0xF000..0xFFFF), so other accesses are a usage_error.
// Not thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/transport/transport.hpp"
#include "runtime/transport/usb/usb_device.hpp"

namespace tg::transport::usb {

// First fit over the 512 KiB: the lowest gap that holds the request.
class sram_allocator {
 public:
  // Returns the SRAM offset of `bytes` (a positive multiple of 4 KiB); device_error when no gap
  // is large enough.
  std::uint64_t allocate(const std::string& device_name, std::uint64_t bytes);
  // Gives back what allocate() returned at `offset` in generation `generation`; a release from
  // before the last reset() is ignored (that space was handed out afresh).
  void release(std::uint64_t offset, std::uint64_t generation);
  void reset();  // forget every allocation (a bridge reset)
  std::uint64_t generation() const { return generation_; }
  std::uint64_t used() const;

 private:
  std::map<std::uint64_t, std::uint64_t> taken_;  // offset -> bytes
  std::uint64_t generation_ = 0;
};

class usb_dma_region final : public dma_region {
 public:
  // Takes `bytes` from `sram` (device_error when it has no room) and gives them back on destruction.
  usb_dma_region(usb_device& dev, std::shared_ptr<sram_allocator> sram, std::uint64_t bytes);
  ~usb_dma_region() override;
  usb_dma_region(const usb_dma_region&) = delete;
  usb_dma_region& operator=(const usb_dma_region&) = delete;
  std::uint64_t size() const override { return size_; }
  std::uint64_t sram_offset() const { return sram_offset_; }
  std::vector<std::uint64_t> page_bus_addresses() const override;
  void read(std::uint64_t offset, std::span<std::byte> out) override;
  void write(std::uint64_t offset, std::span<const std::byte> in) override;

 private:
  void check(const char* what, std::uint64_t offset, std::uint64_t bytes) const;

  usb_device* dev_;
  std::shared_ptr<sram_allocator> sram_;
  std::uint64_t sram_offset_, size_, generation_;
};

class usb_staging_window final : public staging_window {
 public:
  explicit usb_staging_window(usb_device& dev) : dev_(&dev) {}
  std::uint64_t bus_address() const override;
  std::uint64_t size() const override;
  // `offset` must start a 16 KiB slot; the last 512-byte sector is padded with zeros.
  void write(std::uint64_t offset, std::span<const std::byte> in) override;
  void arm_read(std::uint64_t offset, std::uint64_t bytes) override;
  std::uint64_t release_bus_address() const override;
  void finish_read(std::span<std::byte> out) override;
  // The copy-in fence: sys_buf + 0x800 (PCIe 0x820800, XDATA 0xA800), read with one 0xE4.
  std::uint64_t fence_bus_address() const override;
  std::uint64_t read_fence() override;
  // A USB reset drops whatever read the bridge had armed.
  void forget_armed_read() { armed_bytes_ = 0; }

 private:
  usb_device* dev_;
  std::uint64_t armed_bytes_ = 0;  // 0: no read armed
};

}  // namespace tg::transport::usb
