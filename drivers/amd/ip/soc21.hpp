// soc21.hpp: the SOC-level bits of a gfx11 / gfx12 boot that belong to no IP block: the doorbell
// aperture (tinygrad/runtime/support/am/amdev.py: AMDev "SOC") and PCI bus mastering around a mode-1 reset (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
//
//   const tg::amd::pci_state saved = tg::amd::soc21_save_pci_state(transport);
//   tg::amd::soc21_set_bus_master(transport, false);
//   smu.mode1_reset();
//   tg::amd::soc21_finish_mode1_reset(ctx, saved);  // bus mastering comes back with the header
//   tg::amd::soc21_init(ctx);
#pragma once
#include <array>
#include <cstdint>

#include "drivers/amd/am_context.hpp"

namespace tg::amd {

// RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = 1, so BAR2 stores reach the engines.
void soc21_init(am_context& c);
// PCI COMMAND.BUS_MASTER (config offset 4, bit 2).
void soc21_set_bus_master(transport::device_transport& t, bool enable);

// The standard configuration header (dwords 0..15), read before a mode-1 reset clears it.
struct pci_state {
  std::array<std::uint32_t, 16> header{};
};
pci_state soc21_save_pci_state(transport::device_transport& t);
// A mode-1 reset as Linux completes it (amdgpu_device_mode1_reset): the saved header written back
// (amdgpu_device_load_pci_state: dwords 15 down to 1, those that differ, as pci_restore_state),
// then RCC_CONFIG_MEMSIZE polled until it reads something other than all ones, i.e. the card
// answers MMIO again. device_error after the context's timeout.
void soc21_finish_mode1_reset(am_context& c, const pci_state& saved);

}  // namespace tg::amd
