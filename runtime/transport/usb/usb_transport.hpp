// usb_transport.hpp: a device_transport over the ASM2464 bridge: config space as config TLPs to
// bus 4, BARs as bounded PCIe memory streams, DMA memory and the staging window (with the
// copy-in fence in sys_buf) in the bridge's memory (tinygrad/runtime/support/system.py:
// USBPCIDevice; tinygrad/runtime/ops_amd.py: USBIface).
//
//   auto usb = make_libusb_backend();
//   auto gpu = open_usb_transport(*usb, "usb:3-2");            // "" = the first bridge
//   std::uint32_t vendor = gpu->config_read(0x00, 2);           // 0x1002
//   gpu->bar(0).write(vram_offset, bytes);                     // 64 KiB streams, scaled timeouts
//
// Opening takes a process lock (am_usb_<bus>-<address>.lock in the temp directory), opens the
// bridge (recovering one a crashed process left wedged), brings the PCIe link up and assigns the
// GPU's BARs. A device_error from a transfer leaves the bridge in an unknown state: call reset().
// Not thread-safe: the driver serialises access to one GPU.
#pragma once
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/transport/transport.hpp"
#include "runtime/transport/usb/pcie_stream.hpp"
#include "runtime/transport/usb/process_lock.hpp"
#include "runtime/transport/usb/tlp.hpp"
#include "runtime/transport/usb/usb_backend.hpp"
#include "runtime/transport/usb/usb_bar_window.hpp"
#include "runtime/transport/usb/usb_device.hpp"
#include "runtime/transport/usb/usb_sram.hpp"

namespace tg::transport::usb {

struct usb_transport_options {
  stream_limits stream;        // chunk size (default 64 KiB) and bulk timeouts
  tlp_retry_policy retry;      // config TLPs whose return status is not 0
  bool take_lock = true;
  std::string lock_directory;  // empty: $TMPDIR or /tmp
  log_sink log = log_to_tg;
};

class usb_transport final : public device_transport {
 public:
  usb_transport(usb_backend& backend, const usb_device_info& device, usb_transport_options options = {});
  usb_transport(const usb_transport&) = delete;  // the BAR windows point into this object
  usb_transport& operator=(const usb_transport&) = delete;

  std::string name() const override { return dev_->name(); }
  transport_kind kind() const override { return transport_kind::usb; }
  transport_limits limits() const override;

  std::uint32_t config_read(std::uint32_t offset, unsigned bytes) override;
  void config_write(std::uint32_t offset, std::uint32_t value, unsigned bytes) override;

  bar_region bar_info(unsigned index) const override;
  bar_window& bar(unsigned index) override;

  // A slice of the SRAM, given back when the region is destroyed (first fit, usb_sram.hpp).
  std::unique_ptr<dma_region> allocate_dma(std::uint64_t bytes) override;
  staging_window* staging() override { return &staging_; }

  // USB port reset, PCIe link bring-up and enumeration again; DMA allocations start over.
  void reset() override;
  std::optional<link_counters> link_traffic() const override { return dev_->traffic(); }

  usb_device& device() { return *dev_; }

 private:
  void set_up_pcie();
  void check_config_access(const char* what, std::uint32_t offset, unsigned bytes) const;

  usb_transport_options options_;
  std::unique_ptr<process_lock> lock_;
  std::unique_ptr<usb_device> dev_;
  std::array<bar_region, 6> bars_{};
  std::array<std::optional<usb_bar_window>, 6> windows_;
  std::shared_ptr<sram_allocator> sram_ = std::make_shared<sram_allocator>();  // shared with live DMA regions
  usb_staging_window staging_;
};

// The bridge called `name` ("usb:3-2"; "" = the first one found), opened.
std::unique_ptr<usb_transport> open_usb_transport(usb_backend& backend, std::string_view name,
                                                  usb_transport_options options = {});

}  // namespace tg::transport::usb
