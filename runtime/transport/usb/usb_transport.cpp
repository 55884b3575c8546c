// usb_transport.cpp: the device_transport over the bridge (tinygrad/runtime/support/system.py:
// USBPCIDevice).
//
//   auto gpu = open_usb_transport(backend, "");
//
// Not thread-safe.
#include "runtime/transport/usb/usb_transport.hpp"

#include "runtime/transport/usb/link.hpp"
#include "runtime/transport/usb/pcie_enumerate.hpp"
#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::transport::usb {
namespace {

std::string lock_file_name(const usb_device_info& info) {
  return str("am_usb_", unsigned(info.bus), "-", unsigned(info.address), ".lock");
}

std::unique_ptr<process_lock> take_lock(const usb_device_info& info, const usb_transport_options& options) {
  if (!options.take_lock) return nullptr;
  return std::make_unique<process_lock>(usb_device_name(info), lock_file_name(info), options.lock_directory);
}

std::unique_ptr<usb_device> open_device(usb_backend& backend, const usb_device_info& info,
                                        const usb_transport_options& options) {
  check_stream_limits(options.stream);
  return std::make_unique<usb_device>(open_usb_device(backend, info, options.log));
}

}  // namespace

// The lock comes first: a second process must not reset or re-enumerate a bridge in use.
usb_transport::usb_transport(usb_backend& backend, const usb_device_info& device, usb_transport_options options)
    : options_(std::move(options)),
      lock_(take_lock(device, options_)),
      dev_(open_device(backend, device, options_)),
      staging_(*dev_) {
  set_up_pcie();
}

void usb_transport::set_up_pcie() {
  bring_up_link(*dev_);
  bars_ = enumerate_pcie(*dev_, options_.retry);
  // Windows survive a reset (the driver may hold references); only their regions change.
  for (unsigned i = 0; i < bars_.size(); ++i) {
    if (windows_[i])
      windows_[i]->set_region(bars_[i]);
    else if (bars_[i].size != 0)
      windows_[i].emplace(*dev_, i, bars_[i], options_.stream);
  }
}

transport_limits usb_transport::limits() const {
  return {options_.stream.max_chunk_bytes, options_.stream.max_chunk_bytes, false};
}

void usb_transport::check_config_access(const char* what, std::uint32_t offset, unsigned bytes) const {
  if ((bytes != 1 && bytes != 2 && bytes != 4) || offset % bytes != 0 || offset + bytes > 4096)
    throw usage_error(str(name(), ": config ", what, " of ", bytes, " bytes at ", upper_hex(offset, 3),
                          ": needs 1, 2 or 4 bytes, aligned, inside the 4 KiB config space"));
}

std::uint32_t usb_transport::config_read(std::uint32_t offset, unsigned bytes) {
  check_config_access("read", offset, bytes);
  return usb::config_read(*dev_, gpu_bus, offset, bytes, options_.retry);
}

void usb_transport::config_write(std::uint32_t offset, std::uint32_t value, unsigned bytes) {
  check_config_access("write", offset, bytes);
  usb::config_write(*dev_, gpu_bus, offset, value, bytes, options_.retry);
}

bar_region usb_transport::bar_info(unsigned index) const {
  if (index >= bars_.size()) throw usage_error(str(name(), ": there is no BAR", index, " (BARs are 0..5)"));
  return bars_[index];
}

bar_window& usb_transport::bar(unsigned index) {
  if (index >= windows_.size() || !windows_[index])
    throw usage_error(str(name(), ": BAR", index, " is not implemented by the GPU or was not assigned"));
  return *windows_[index];
}

std::unique_ptr<dma_region> usb_transport::allocate_dma(std::uint64_t bytes) {
  return std::make_unique<usb_dma_region>(*dev_, sram_, bytes);
}

void usb_transport::reset() {
  dev_->reset();
  sram_->reset();
  staging_.forget_armed_read();
  set_up_pcie();
}

std::unique_ptr<usb_transport> open_usb_transport(usb_backend& backend, std::string_view name,
                                                  usb_transport_options options) {
  return std::make_unique<usb_transport>(backend, find_usb_bridge(backend, name), std::move(options));
}

}  // namespace tg::transport::usb
