// libusb_missing.cpp: make_libusb_backend() for builds without libusb-1.0 (meson -Dusb=disabled or
// no libusb-1.0-0-dev): the USB transport still builds, for the emulated bridge, and real hardware
// gets a clear error.
//
//   make_libusb_backend();  // device_error: "usb: tg was built without libusb-1.0 ..."
//
// Thread-safe.
#include "runtime/transport/usb/usb_backend.hpp"
#include <tg/core/error.hpp>

namespace tg::transport::usb {

std::unique_ptr<usb_backend> make_libusb_backend() {
  throw device_error(
      "usb: tg was built without libusb-1.0; install libusb-1.0-0-dev and reconfigure with -Dusb=enabled");
}

}  // namespace tg::transport::usb
