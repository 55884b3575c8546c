// usb_status.cpp: names of usb_status values, as messages print them.
//
//   to_string(usb_status::timeout)  // "timeout"
//
// Pure function; thread-safe.
#include "runtime/transport/usb/usb_backend.hpp"

namespace tg::transport::usb {

const char* to_string(usb_status s) {
  switch (s) {
    case usb_status::ok: return "ok";
    case usb_status::timeout: return "timeout";
    case usb_status::stall: return "stall (endpoint halted or request refused)";
    case usb_status::no_device: return "no device (unplugged?)";
    case usb_status::busy: return "busy (claimed by another driver or process?)";
    case usb_status::access: return "access denied (permissions on /dev/bus/usb?)";
    case usb_status::not_found: return "not found";
    case usb_status::overflow: return "overflow (device sent more than asked)";
    case usb_status::io: return "I/O error";
    case usb_status::other: return "other error";
  }
  return "unknown status";
}

}  // namespace tg::transport::usb
