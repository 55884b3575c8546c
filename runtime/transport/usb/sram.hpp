// sram.hpp: bulk access to the bridge's 512 KiB SRAM through vendor request 0xF2
// (tinygrad/runtime/support/usb.py: CustomASM24Controller.scsi_write; tinygrad/runtime/ops_amd.py:
// AMDAllocator._copyin, _copyout). The GPU sees the SRAM as system memory at PCIe 0x200000.
//
//   sram_write(dev, 0, bytes);           // 0xF2 (sectors, slot 0) + bulk OUT 0x02
//   sram_arm_read(dev, 0, n);            // 0xF2 with bit 15: stream once the GPU releases it
//   ... the GPU copies into the SRAM, then stores a dword at PCIe 0x82200C ...
//   sram_finish_read(dev, out);          // bulk IN 0x81 of round_up(n, 512), first n kept
//
// Offsets are SRAM offsets and must start a 16 KiB slot. Transfers move whole 512-byte sectors:
// a write pads its last sector with zeros (so up to 511 bytes after it are overwritten).
// usage_error for an offset or size outside these rules. Not thread-safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/transport/usb/usb_device.hpp"

namespace tg::transport::usb {

void sram_write(usb_device& dev, std::uint64_t offset, std::span<const std::byte> in);
void sram_arm_read(usb_device& dev, std::uint64_t offset, std::uint64_t bytes);
void sram_finish_read(usb_device& dev, std::span<std::byte> out);

// The 0xF2 setup fields of a transfer of `bytes` starting at SRAM `offset` (as scsi_write and
// scsi_read_arm compute them).
struct sram_setup {
  std::uint16_t value;  // sectors of 512 bytes (bits 14:0); bit 15 = arm a read
  std::uint16_t index;  // start slot (7:0) | number of 16 KiB slots << 8
};
sram_setup sram_setup_fields(std::uint64_t offset, std::uint64_t bytes, bool read);

}  // namespace tg::transport::usb
