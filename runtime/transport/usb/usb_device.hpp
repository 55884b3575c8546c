// usb_device.hpp: one opened ASM2464 bridge: the USB set-up of tinygrad/runtime/support/usb.py:
// USB3.__init__ (with tg's recovery of a bridge a crashed process left mid-transfer) and transfers
// whose failures become errors that name the device, the request, the endpoint, the size and the
// timeout.
//
//   auto usb = make_libusb_backend();
//   std::vector<transport::device_entry> found = list_usb_bridges(*usb);
//   usb_device dev = open_usb_device(*usb, find_usb_bridge(*usb, "usb:3-2"));
//   dev.bulk_out(bytes, std::chrono::milliseconds(1000));
//   // failure: "usb:3-2: bulk OUT 0x02 of 65536 bytes timed out after 1000 ms (...)"
//
// Not thread-safe: one thread uses a device at a time.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/transport/transport.hpp"
#include "runtime/transport/usb/usb_backend.hpp"

namespace tg::transport::usb {

// Where the transport reports what it does on its own (a recovery reset). Default: tg::log.
using log_sink = std::function<void(const std::string&)>;
void log_to_tg(const std::string& line);

// "usb:<bus>-<address>" (USB3.list_devices).
std::string usb_device_name(const usb_device_info& info);

// True for the custom-firmware IDs 0xADD1:0x0001 and 0x3801:0x0001 (tinygrad/runtime/ops_amd.py:
// USBIface).
bool is_usb_bridge(const usb_device_info& info);

// The bridges on the bus, in libusb order.
std::vector<transport::device_entry> list_usb_bridges(usb_backend& backend);

// The bridge called `name` ("usb:3-2"), or the first bridge when name is empty; device_error
// listing what was found otherwise.
usb_device_info find_usb_bridge(usb_backend& backend, std::string_view name);

class usb_device {
 public:
  usb_device(std::unique_ptr<usb_handle> handle, const usb_device_info& info);

  const std::string& name() const { return name_; }
  const usb_device_info& info() const { return info_; }
  const std::string& product() const { return product_; }
  usb_handle& handle() { return *handle_; }

  // Vendor (or standard, with request_type) control transfers; the IN form fills all of `data`
  // or throws. Failures name the request, wValue, wIndex, size, timeout and status.
  void control_out(std::uint8_t request, std::uint16_t value, std::uint16_t index,
                   std::span<const std::byte> data, std::chrono::milliseconds timeout);
  void control_in(std::uint8_t request, std::uint16_t value, std::uint16_t index, std::span<std::byte> data,
                  std::chrono::milliseconds timeout, std::uint8_t request_type = 0xC0);
  // Bulk on 0x02 / 0x81. bulk_in must fill all of `data`.
  void bulk_out(std::span<const std::byte> data, std::chrono::milliseconds timeout);
  void bulk_in(std::span<std::byte> data, std::chrono::milliseconds timeout);

  // Reads the product string (as USB3.__init__); returns the status, with `out` set on success.
  usb_status try_read_product(std::string& out);
  void set_product(std::string product) { product_ = std::move(product); }

  // A USB port reset; device_error naming the status when it fails.
  void reset();

  // Every control and bulk transfer made through this object, failed ones included.
  const transport::link_counters& traffic() const { return traffic_; }

 private:
  void count(std::size_t bytes, bool out) {
    ++traffic_.transfers;
    (out ? traffic_.bytes_out : traffic_.bytes_in) += bytes;
  }
  transport::link_counters traffic_;
  std::unique_ptr<usb_handle> handle_;
  usb_device_info info_;
  std::string name_;
  std::string product_;
};

// Opens and sets up a bridge (the steps of USB3.__init__): product string (reset once and retry
// when the bridge does not answer), product check ("custom..." / "AS2462..."), kernel-driver detach,
// configuration 1, interface 0, alternate setting 0.
usb_device open_usb_device(usb_backend& backend, const usb_device_info& info, const log_sink& log = log_to_tg);

}  // namespace tg::transport::usb
