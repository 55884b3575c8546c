// soc21.hpp: the SOC-level bits of a gfx11 / gfx12 boot that belong to no IP block: the doorbell
// aperture (tinygrad/runtime/support/am/amdev.py: AMDev "SOC") and PCI bus mastering around a mode-1 reset (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
//
//   tg::amd::soc21_set_bus_master(transport, false);
//   smu.mode1_reset();
//   tg::amd::soc21_set_bus_master(transport, true);
//   tg::amd::soc21_init(ctx);
#pragma once
#include "drivers/amd/am_context.hpp"

namespace tg::amd {

// RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = 1, so BAR2 stores reach the engines.
void soc21_init(am_context& c);
// PCI COMMAND.BUS_MASTER (config offset 4, bit 2).
void soc21_set_bus_master(transport::device_transport& t, bool enable);

}  // namespace tg::amd
