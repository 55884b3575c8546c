// soc21.cpp: SOC bits of the boot (see soc21.hpp).
#include "drivers/amd/ip/soc21.hpp"

#include <tg/core/error.hpp>

namespace tg::amd {

namespace {
constexpr std::uint32_t pci_command = 0x04, bus_master = 1u << 2;  // PCI spec: Command register
}  // namespace

void soc21_init(am_context& c) { c.io.write(nbio_reg::doorbell_aper_en, 1); }

void soc21_set_bus_master(transport::device_transport& t, bool enable) {
  const std::uint32_t cmd = t.config_read(pci_command, 2);
  t.config_write(pci_command, enable ? cmd | bus_master : cmd & ~bus_master, 2);
}

pci_state soc21_save_pci_state(transport::device_transport& t) {
  pci_state s;
  for (std::uint32_t i = 0; i < s.header.size(); ++i) s.header[i] = t.config_read(4 * i, 4);
  return s;
}

void soc21_finish_mode1_reset(am_context& c, const pci_state& saved) {
  for (std::uint32_t i = std::uint32_t(saved.header.size()) - 1; i >= 1; --i)
    if (c.t.config_read(4 * i, 4) != saved.header[i]) c.t.config_write(4 * i, saved.header[i], 4);
  std::uint32_t memsize = 0xFFFFFFFFu;
  if (!wait_until([&] { return (memsize = c.io.read(nbio_reg::config_memsize)) != 0xFFFFFFFFu; }, c.opt.timeout))
    throw device_error(str(c.name(), ": the GPU did not come back from its mode-1 reset within ",
                           c.opt.timeout.count(), " ms (RCC_CONFIG_MEMSIZE ", hex{nbio_reg::config_memsize},
                           " still reads ", hex{memsize}, ")"));
}

}  // namespace tg::amd
