// soc21.cpp: SOC bits of the boot (see soc21.hpp).
#include "drivers/amd/ip/soc21.hpp"

namespace tg::amd {

namespace {
constexpr std::uint32_t pci_command = 0x04, bus_master = 1u << 2;  // PCI spec: Command register
}  // namespace

void soc21_init(am_context& c) { c.io.write(nbio_reg::doorbell_aper_en, 1); }

void soc21_set_bus_master(transport::device_transport& t, bool enable) {
  const std::uint32_t cmd = t.config_read(pci_command, 2);
  t.config_write(pci_command, enable ? cmd | bus_master : cmd & ~bus_master, 2);
}

}  // namespace tg::amd
