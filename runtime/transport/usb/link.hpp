// link.hpp: the bridge's PCIe link: power (0xF3) and bring-up (tinygrad/runtime/support/usb.py:
// CustomASM24Controller.set_pcie_power, __init__).
//
//   bring_up_link(dev);   // LTSSM 0x78 already, or after one power-on; device_error otherwise
//
// The custom firmware boots with PCIe off. There is deliberately no polling loop: the reference
// tried one and reverted it (the git history of tinygrad/runtime/support/usb.py). Not thread-safe.
#pragma once
#include <cstdint>

#include "runtime/transport/usb/usb_device.hpp"

namespace tg::transport::usb {

void set_pcie_power(usb_device& dev, bool on);
std::uint8_t read_ltssm(usb_device& dev);
void bring_up_link(usb_device& dev);

}  // namespace tg::transport::usb
