// usb_backend.hpp: the libusb-level calls the USB transport makes, behind an interface so that the
// emulated ASM2464 bridge (drivers/emu/usb) can stand in for libusb in tests.
//
// The real implementation (libusb_backend.cpp) is a thin shell over libusb-1.0: one context per
// backend, no policy. Results come back as a status, never as an exception: turning a status into
// an error that names the request, endpoint, size and timeout is the job of the layer above
// (usb_device.hpp), which knows what was asked.
//
//   std::unique_ptr<usb_backend> usb = make_libusb_backend();
//   for (const usb_device_info& d : usb->list()) if (d.vendor_id == 0xADD1) ...
//   std::unique_ptr<usb_handle> h = usb->open(d);
//   transfer_result r = h->control(0xC0, 0xE4, 0xB450, 0, byte, std::chrono::milliseconds(1000));
//
// A handle is used by one thread at a time; async transfers complete on whoever waits for them.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tg::transport::usb {

// libusb's outcomes that the transport tells apart (libusb_error / libusb_transfer_status).
enum class usb_status { ok, timeout, stall, no_device, busy, access, not_found, overflow, io, other };
const char* to_string(usb_status s);

struct transfer_result {
  usb_status status = usb_status::ok;
  std::size_t transferred = 0;  // bytes actually moved (a timeout may have moved some)
};

struct usb_device_info {
  std::uint8_t bus = 0, address = 0;  // "usb:<bus>-<address>" (USB3.list_devices)
  std::uint16_t vendor_id = 0, product_id = 0;
  std::uint8_t product_string_index = 0;  // iProduct of the device descriptor (0: none)
};

// A transfer in flight. wait() blocks until it completes, fails or times out (the timeout given
// when it was submitted) and may be called once.
class async_transfer {
 public:
  virtual ~async_transfer() = default;
  virtual bool done() = 0;
  virtual transfer_result wait() = 0;
};

class usb_handle {
 public:
  virtual ~usb_handle() = default;
  // A control transfer on EP0. Direction from request_type bit 7 (0x80 = IN: data is filled).
  virtual transfer_result control(std::uint8_t request_type, std::uint8_t request, std::uint16_t value,
                                  std::uint16_t index, std::span<std::byte> data,
                                  std::chrono::milliseconds timeout) = 0;
  // A bulk transfer; direction from endpoint bit 7 (0x81 = IN: data is filled).
  virtual transfer_result bulk(std::uint8_t endpoint, std::span<std::byte> data, std::chrono::milliseconds timeout) = 0;
  // The same, asynchronous. `data` must stay alive until wait() returns.
  virtual std::unique_ptr<async_transfer> submit_control(std::uint8_t request_type, std::uint8_t request,
                                                         std::uint16_t value, std::uint16_t index,
                                                         std::span<std::byte> data,
                                                         std::chrono::milliseconds timeout) = 0;
  virtual std::unique_ptr<async_transfer> submit_bulk(std::uint8_t endpoint, std::span<std::byte> data,
                                                      std::chrono::milliseconds timeout) = 0;

  virtual bool kernel_driver_active(int interface) = 0;
  virtual usb_status detach_kernel_driver(int interface) = 0;
  virtual usb_status set_configuration(int configuration) = 0;
  virtual usb_status claim_interface(int interface) = 0;
  virtual usb_status set_interface_alt_setting(int interface, int alt_setting) = 0;
  // A USB port reset of the device (libusb_reset_device). The handle stays usable on success.
  virtual usb_status reset_device() = 0;
};

class usb_backend {
 public:
  virtual ~usb_backend() = default;
  virtual std::vector<usb_device_info> list() = 0;
  // device_error naming the device and libusb's message when it cannot be opened (permissions).
  virtual std::unique_ptr<usb_handle> open(const usb_device_info& device) = 0;
};

// The real thing: a libusb-1.0 context. device_error when libusb_init fails.
std::unique_ptr<usb_backend> make_libusb_backend();

}  // namespace tg::transport::usb
