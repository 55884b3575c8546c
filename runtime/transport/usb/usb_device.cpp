// usb_device.cpp: bridge discovery, the open sequence with its recovery, and transfers that turn
// every non-ok status into a device_error naming what was asked (the open sequence of
// tinygrad/runtime/support/usb.py: USB3.__init__; the recovery is tg's).
//
//   usb_device dev = open_usb_device(backend, find_usb_bridge(backend, ""));
//
// Not thread-safe (see usb_device.hpp).
#include "runtime/transport/usb/usb_device.hpp"

#include <cstdio>
#include <utility>

#include "runtime/transport/usb/bridge_requests.hpp"
#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>
#include <tg/log.hpp>

namespace tg::transport::usb {
namespace {

// The USB language id the firmware's strings use (English, US).
constexpr std::uint16_t langid_en_us = 0x0409;
constexpr std::uint16_t descriptor_type_string = 0x03;

// "timed out after 1000 ms" / "failed: stall (...)", with a hint where one helps.
std::string outcome(usb_status s, std::chrono::milliseconds timeout) {
  if (s == usb_status::timeout)
    return str("timed out after ", timeout.count(), " ms (bridge busy or wedged? reset the transport)");
  return str("failed: ", to_string(s));
}

std::string control_what(const std::string& device, std::uint8_t request_type, std::uint8_t request,
                         std::uint16_t value, std::uint16_t index, std::size_t size) {
  return str(device, ": control ", upper_hex(request, 2), " (", request_name(request), ") ",
             (request_type & 0x80) ? "IN" : "OUT", " wValue=", upper_hex(value, 4), " wIndex=", upper_hex(index, 4), " of ",
             size, " bytes");
}

std::string bulk_what(const std::string& device, std::uint8_t endpoint, std::size_t size) {
  return str(device, ": bulk ", (endpoint & 0x80) ? "IN " : "OUT ", upper_hex(endpoint, 2), " of ", size, " bytes");
}

// A string descriptor is bLength, bDescriptorType (3), then UTF-16LE code units. The firmware's
// strings are ASCII; anything else shows as '?' so a message can still quote it.
std::string decode_string_descriptor(std::span<const std::byte> reply) {
  std::string out;
  if (reply.size() < 2) return out;
  std::size_t end = std::min<std::size_t>(reply.size(), std::size_t(reply[0]));
  for (std::size_t i = 2; i + 1 < end; i += 2) {
    unsigned unit = unsigned(reply[i]) | unsigned(reply[i + 1]) << 8;
    out.push_back(unit >= 0x20 && unit < 0x7F ? char(unit) : '?');
  }
  return out;
}

void check_setup_step(const std::string& device, const char* step, usb_status s) {
  if (s != usb_status::ok) throw device_error(str(device, ": ", step, " failed: ", to_string(s)));
}

}  // namespace

void log_to_tg(const std::string& line) { tg::log(tg::log_level::warning, "usb: " + line); }

std::string usb_device_name(const usb_device_info& info) {
  return str("usb:", unsigned(info.bus), "-", unsigned(info.address));
}

bool is_usb_bridge(const usb_device_info& info) {
  return info.product_id == 0x0001 && (info.vendor_id == 0xADD1 || info.vendor_id == 0x3801);
}

std::vector<transport::device_entry> list_usb_bridges(usb_backend& backend) {
  std::vector<transport::device_entry> out;
  for (const usb_device_info& d : backend.list()) {
    if (!is_usb_bridge(d)) continue;
    out.push_back({transport_kind::usb, usb_device_name(d), 0, 0,
                   str("ASM2464 bridge ", upper_hex(d.vendor_id, 4), ":", upper_hex(d.product_id, 4))});
  }
  return out;
}

usb_device_info find_usb_bridge(usb_backend& backend, std::string_view name) {
  std::string seen;
  for (const usb_device_info& d : backend.list()) {
    if (!is_usb_bridge(d)) continue;
    if (name.empty() || usb_device_name(d) == name) return d;
    seen += (seen.empty() ? "" : ", ") + usb_device_name(d);
  }
  if (name.empty())
    throw device_error("usb: no ASM2464 bridge found (USB ids 0xADD1:0x0001 or 0x3801:0x0001); is the dock "
                       "plugged in and running the custom firmware?");
  throw device_error(str("usb: no bridge called ", name, " (found: ", seen.empty() ? "none" : seen, ")"));
}

usb_device::usb_device(std::unique_ptr<usb_handle> handle, const usb_device_info& info)
    : handle_(std::move(handle)), info_(info), name_(usb_device_name(info)) {}

void usb_device::control_out(std::uint8_t request, std::uint16_t value, std::uint16_t index,
                             std::span<const std::byte> data, std::chrono::milliseconds timeout) {
  // usb_handle takes a mutable span for both directions; an OUT transfer only reads it.
  std::vector<std::byte> copy(data.begin(), data.end());
  count(data.size(), true);
  transfer_result r = handle_->control(request_type_vendor_out, request, value, index, copy, timeout);
  if (r.status != usb_status::ok)
    throw device_error(str(control_what(name_, request_type_vendor_out, request, value, index, data.size()), " ",
                           outcome(r.status, timeout)));
}

void usb_device::control_in(std::uint8_t request, std::uint16_t value, std::uint16_t index,
                            std::span<std::byte> data, std::chrono::milliseconds timeout, std::uint8_t request_type) {
  count(data.size(), false);
  transfer_result r = handle_->control(request_type, request, value, index, data, timeout);
  std::string what = control_what(name_, request_type, request, value, index, data.size());
  if (r.status != usb_status::ok) throw device_error(str(what, " ", outcome(r.status, timeout)));
  if (r.transferred != data.size()) throw device_error(str(what, " returned only ", r.transferred, " bytes"));
}

void usb_device::bulk_out(std::span<const std::byte> data, std::chrono::milliseconds timeout) {
  std::span<std::byte> bytes(const_cast<std::byte*>(data.data()), data.size());  // OUT: only read
  count(data.size(), true);
  transfer_result r = handle_->bulk(endpoint_bulk_out, bytes, timeout);
  std::string what = bulk_what(name_, endpoint_bulk_out, data.size());
  if (r.status != usb_status::ok)
    throw device_error(str(what, " ", outcome(r.status, timeout), "; ", r.transferred, " bytes went through"));
  if (r.transferred != data.size()) throw device_error(str(what, " moved only ", r.transferred, " bytes"));
}

void usb_device::bulk_in(std::span<std::byte> data, std::chrono::milliseconds timeout) {
  count(data.size(), false);
  transfer_result r = handle_->bulk(endpoint_bulk_in, data, timeout);
  std::string what = bulk_what(name_, endpoint_bulk_in, data.size());
  if (r.status != usb_status::ok) throw device_error(str(what, " ", outcome(r.status, timeout)));
  if (r.transferred != data.size()) throw device_error(str(what, " returned only ", r.transferred, " bytes"));
}

usb_status usb_device::try_read_product(std::string& out) {
  std::vector<std::byte> reply(255);
  auto value = std::uint16_t(descriptor_type_string << 8 | info_.product_string_index);
  transfer_result r = handle_->control(request_type_standard_in, bridge_request::get_descriptor, value,
                                       langid_en_us, reply, descriptor_timeout);
  if (r.status == usb_status::ok) out = decode_string_descriptor(std::span(reply).first(r.transferred));
  return r.status;
}

void usb_device::reset() {
  usb_status s = handle_->reset_device();
  if (s != usb_status::ok)
    throw device_error(str(name_, ": USB reset of the bridge failed: ", to_string(s),
                           "; unplug and replug the dock, or power-cycle it"));
}

usb_device open_usb_device(usb_backend& backend, const usb_device_info& info, const log_sink& log) {
  usb_device dev(backend.open(info), info);
  const std::string& name = dev.name();
  if (info.product_string_index == 0)
    throw device_error(str(name, ": the bridge has no product string (iProduct 0); is it running the custom "
                                 "firmware?"));
  std::string product;
  usb_status s = dev.try_read_product(product);
  bool recoverable = s != usb_status::no_device && s != usb_status::access;
  if (s != usb_status::ok && !recoverable)
    throw device_error(str(name, ": reading the product string failed: ", to_string(s)));
  if (s != usb_status::ok) {
    // A process that died mid-transfer can leave the firmware deaf even to standard requests on
    // EP0; a port reset is the only cure short of a replug.
    if (log)
      log(str("bridge ", name, " did not answer (probably left mid-transfer by a process that crashed); "
              "resetting the USB device"));
    usb_status reset = dev.handle().reset_device();
    s = reset == usb_status::ok ? dev.try_read_product(product) : reset;
  }
  if (s != usb_status::ok)
    throw device_error(str(name, ": reading the product string (GET_DESCRIPTOR wValue=",
                           upper_hex(0x0300 | info.product_string_index, 4), " wIndex=0x0409) failed even after a USB "
                           "reset: ", to_string(s), "; the bridge is wedged: unplug and replug the dock, or "
                           "power-cycle it"));
  if (product.rfind("custom", 0) != 0 && product.rfind("AS2462", 0) != 0)
    throw device_error(str(name, ": product string is \"", product, "\"; expected one starting with \"custom\" "
                           "or \"AS2462\" (flash the custom ASM2464 firmware)"));
  dev.set_product(product);

  if (dev.handle().kernel_driver_active(0)) {
    check_setup_step(name, "detaching the kernel driver from interface 0", dev.handle().detach_kernel_driver(0));
    check_setup_step(name, "USB reset after detaching the kernel driver", dev.handle().reset_device());
  }
  check_setup_step(name, "set_configuration(1)", dev.handle().set_configuration(1));
  check_setup_step(name, "claim_interface(0)", dev.handle().claim_interface(0));
  check_setup_step(name, "set_interface_alt_setting(0, 0)", dev.handle().set_interface_alt_setting(0, 0));
  return dev;
}

}  // namespace tg::transport::usb
