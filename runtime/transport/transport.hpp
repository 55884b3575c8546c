// transport.hpp: how the host reaches one AMD GPU: its PCI configuration space, its BARs, memory of
// the host the GPU can read and write (DMA), and a reset. Moves bytes and maps BARs, nothing more.
//
// Two implementations: PCI (runtime/transport/pci: Linux sysfs resource files or VFIO, BARs
// memory-mapped) and USB (runtime/transport/usb: the ASM2464 bridge, where every BAR access is a
// PCIe TLP carried by USB transfers, tinygrad/runtime/support/usb.py: CustomASM24Controller). The
// emulator (drivers/emu) sits under both, behind a fake sysfs and a fake libusb, so the same
// transport code runs in CI.
//
// The driver (drivers/amd) uses only this interface, so it works the same over either:
//   tg::transport::device_transport& t = ...;
//   std::uint32_t memsize_mib = t.bar(5).read32(0xDE3 * 4);      // RCC_CONFIG_MEMSIZE (amdev.py: _run_discovery)
//   t.bar(0).write(vram_offset, bytes);                          // chunked below limits() on USB
//   std::byte* p = t.bar(0).mapping();                           // nullptr on USB: no CPU mapping
//
// Errors: device_error naming the transport (name()), the operation, the address and, for USB,
// the request and timeout; usage_error for misaligned or out-of-range accesses.
// Not thread-safe: the driver serialises access to one GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tg::transport {

enum class transport_kind { pci, usb };

// Where a BAR sits on the PCIe bus and how big it is (USB: tinygrad/runtime/support/system.py:
// System.pci_setup_usb_bars; PCI: the sysfs `resource` file, PCIDevice.bar_info).
struct bar_region {
  std::uint64_t bus_address = 0;
  std::uint64_t size = 0;  // 0: the BAR is not implemented
  bool is_64bit = false;
  bool prefetchable = false;
};

// One BAR as the host reaches it. Offsets are bytes from the BAR start. read32/write32 and the
// range accesses need 4-byte alignment and 4-byte multiples (the USB bridge's rule, asserted by
// tinygrad/runtime/support/usb.py: USBMMIOInterface); usage_error otherwise, or when the range
// leaves the BAR.
class bar_window {
 public:
  virtual ~bar_window() = default;
  virtual std::uint64_t size() const = 0;
  virtual std::uint32_t read32(std::uint64_t offset) = 0;
  virtual void write32(std::uint64_t offset, std::uint32_t value) = 0;
  // One 64-bit store where the transport can make one (PCI: a single store; doorbells need it).
  virtual void write64(std::uint64_t offset, std::uint64_t value) = 0;
  virtual void read(std::uint64_t offset, std::span<std::byte> out) = 0;
  virtual void write(std::uint64_t offset, std::span<const std::byte> in) = 0;
  // The CPU mapping of the whole BAR, when it is memory-mapped (PCI); nullptr when every access is
  // a message (USB). Callers that get nullptr go through read/write.
  virtual std::byte* mapping() { return nullptr; }
};

// Host memory the GPU can reach as system memory (the GMMU's SYS pages, amdgpu_vm.h: AMDGPU_PTE_SYSTEM).
// PCI: locked anonymous pages with bus addresses from /proc/self/pagemap. USB: a slice of the
// bridge's SRAM, which the host reaches only through the bridge (no mapping).
class dma_region {
 public:
  virtual ~dma_region() = default;
  virtual std::uint64_t size() const = 0;
  // The bus address of each 4 KiB page, in order (contiguous on USB).
  virtual std::vector<std::uint64_t> page_bus_addresses() const = 0;
  virtual void read(std::uint64_t offset, std::span<std::byte> out) = 0;
  virtual void write(std::uint64_t offset, std::span<const std::byte> in) = 0;
  virtual std::byte* mapping() { return nullptr; }
};

// A window of memory on the GPU's side of the link that the host fills and drains in bulk, for
// transports without mapped VRAM (USB: the bridge's 512 KiB SRAM at PCIe 0x200000, the copy_bufs of
// tinygrad/runtime/ops_amd.py: USBIface). The driver moves data between it and VRAM with SDMA.
//   write: the host fills [offset, offset + bytes) (bulk, 0xF2).
//   read:  arm_read(offset, bytes), then the GPU stores any dword at release_bus_address() once
//          its copy into the window is complete, then finish_read() returns the bytes. The host
//          cannot read the window before that store (the bridge streams it only when released).
class staging_window {
 public:
  virtual ~staging_window() = default;
  virtual std::uint64_t bus_address() const = 0;  // where the GPU sees offset 0 (system memory)
  virtual std::uint64_t size() const = 0;
  virtual void write(std::uint64_t offset, std::span<const std::byte> in) = 0;
  virtual void arm_read(std::uint64_t offset, std::uint64_t bytes) = 0;
  virtual std::uint64_t release_bus_address() const = 0;
  virtual void finish_read(std::span<std::byte> out) = 0;  // out.size() == the armed bytes
  // A 64-bit word on the GPU's side that the GPU writes and the host reads back without a
  // release, for pipelined copies (USB: the sys_buf fence at PCIe 0x820800, AMDAllocator._copyin).
  // fence_bus_address() 0: the transport has none, and read_fence() returns 0.
  virtual std::uint64_t fence_bus_address() const { return 0; }
  virtual std::uint64_t read_fence() { return 0; }
};

// What a transport can do in one go. The driver sizes its own work by these (zero-fill chunks,
// copy pipelines); the transport enforces them anyway.
struct transport_limits {
  std::uint64_t max_write_chunk = 0;   // the largest single streaming write it issues (0: unbounded)
  std::uint64_t max_read_chunk = 0;    // the same for reads
  bool cpu_mapped_vram = false;        // bar(0).mapping() is usable
};

// Transfers a transport made on a link it pays per transfer for (the USB bridge: each control or
// bulk transfer is a round trip of tens of microseconds), since it was opened.
struct link_counters {
  std::uint64_t transfers = 0;  // control and bulk transfers, either way
  std::uint64_t bytes_out = 0, bytes_in = 0;
};

class device_transport {
 public:
  virtual ~device_transport() = default;
  // "pci:0000:03:00.0", "usb:3-2": what error messages and `tg-amd list` print.
  virtual std::string name() const = 0;
  virtual transport_kind kind() const = 0;
  virtual transport_limits limits() const = 0;

  // PCI configuration space of the GPU function; bytes is 1, 2 or 4, offset aligned to it.
  virtual std::uint32_t config_read(std::uint32_t offset, unsigned bytes) = 0;
  virtual void config_write(std::uint32_t offset, std::uint32_t value, unsigned bytes) = 0;

  // BAR 0 (VRAM aperture), 2 (doorbells), 5 (MMIO registers); usage_error for an index the
  // transport does not map.
  virtual bar_region bar_info(unsigned index) const = 0;
  virtual bar_window& bar(unsigned index) = 0;

  // `bytes` (a multiple of 4 KiB) of host memory the GPU can reach; device_error when there is
  // none left (the USB bridge has 512 KiB of SRAM in all).
  virtual std::unique_ptr<dma_region> allocate_dma(std::uint64_t bytes) = 0;

  // The bulk staging window, on transports that have one (USB); nullptr otherwise. Shares the
  // SRAM with allocate_dma: the driver uses DMA memory during boot and the window afterwards.
  virtual staging_window* staging() { return nullptr; }

  // Resets the GPU function (PCI) or the bridge and its link (USB), then restores what the
  // transport set up (BAR assignment, bus mastering). The driver boots again afterwards.
  virtual void reset() = 0;

  // What went over the link so far; nullopt where nothing is counted (PCI: MMIO and DMA cost no
  // transfer each).
  virtual std::optional<link_counters> link_traffic() const { return std::nullopt; }
};

// One GPU a transport can open, as discovery lists it.
struct device_entry {
  transport_kind kind;
  std::string name;       // as device_transport::name()
  std::uint16_t vendor_id = 0, device_id = 0;  // 0 when not readable without opening (USB)
  std::string detail;     // "driver amdgpu bound", "bridge product custom-v2", ...
};

}  // namespace tg::transport
