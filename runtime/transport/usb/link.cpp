// link.cpp: PCIe power and link check through XDATA 0xB450 (tinygrad/runtime/support/usb.py:
// CustomASM24Controller.__init__).
//
//   bring_up_link(dev);
//
// Not thread-safe.
#include "runtime/transport/usb/link.hpp"

#include "runtime/transport/usb/bridge_requests.hpp"
#include "runtime/transport/usb/xdata.hpp"
#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::transport::usb {

void set_pcie_power(usb_device& dev, bool on) {
  dev.control_out(bridge_request::power, on ? 1 : 0, 0, {}, power_timeout);
}

std::uint8_t read_ltssm(usb_device& dev) { return read_xdata_byte(dev, xdata_ltssm); }

void bring_up_link(usb_device& dev) {
  if (read_ltssm(dev) == ltssm_link_up) return;
  set_pcie_power(dev, true);
  std::uint8_t ltssm = read_ltssm(dev);
  if (ltssm != ltssm_link_up)
    throw device_error(str(dev.name(), ": PCIe link not up (LTSSM=", upper_hex(ltssm, 2), ", expected ",
                           upper_hex(ltssm_link_up, 2), " after PCIe power-on request 0xF3); custom firmware not ready: "
                           "check the GPU's power cable, then replug the dock"));
}

}  // namespace tg::transport::usb
