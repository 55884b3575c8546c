// emu_device.hpp: the "AMD:EMU" backend: the emulated GPU booted and run by tg's real AM driver,
// through the same code path as a card: emulated_machine (a gfx11 / gfx12 GPU on the emulated PCI
// host or behind the emulated USB bridge, with its firmware folder) + transport::open_transport +
// am_device + am_backend (drivers/amd/am_backend.hpp, which documents the slots).
//
// Programs run as the machine code they are (drivers/emu/shader interprets it): tg kernels
// compiled by the AMD backend (am_backend_compile.cpp) and code objects loaded with
// am_backend::load_program. Nothing else can stand in for a kernel, so the emulated GPU checks the
// code generator's output as a card would.
//
//   tg::device dev("AMD:EMU:gfx12:usb");             // emu_device_registration.cpp
//   auto& emu = dynamic_cast<tg::emu::emu_device&>(dev.impl());
//   auto p = emu.load_program(co, "add", args, {.workgroups = {4, 1, 1}, .workgroup_size = {64, 1, 1}});
//   p->launch(buffers, {});
//
// Programs keep a reference to their device and must not outlive it (tg::device drops its
// programs first). Not thread-safe: one host thread uses a device.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "drivers/amd/am_backend.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"

namespace tg::emu {

using emu_launch_shape = amd::am_launch_shape;

struct emu_device_config {
  gfx_gen gen = gfx_gen::gfx11;
  std::string processor;  // "gfx1101", "gfx1201"; empty: gen's first card (personality.hpp)
  emulated_bus bus = emulated_bus::pci;
  std::uint64_t vram_bytes = 512ull << 20;
};

// "", "gfx11", "gfx12", "gfx1101", "usb", "pci", "gfx1201:usb", "usb:vram=256M", ...: what follows "AMD:EMU:" in a device name;
// usage_error listing the accepted forms otherwise.
emu_device_config parse_emu_device_args(std::string_view args);

class emu_device final : public amd::am_backend {
 public:
  explicit emu_device(const emu_device_config& config = {});
  explicit emu_device(std::shared_ptr<emulated_machine> machine);  // boots on a machine the caller made

  emulated_machine& machine() { return *machine_; }
  gpu& emulated_gpu() { return machine_->device(); }

 private:
  std::shared_ptr<emulated_machine> machine_;  // also held by am_backend until after the transport
};

}  // namespace tg::emu
