// emu_device.hpp: the "AMD:EMU" backend: the emulated GPU booted and run by tg's real AM driver,
// through the same code path as a card: emulated_machine (a gfx11 / gfx12 GPU on the emulated PCI
// host or behind the emulated USB bridge, with its firmware folder) + transport::open_transport +
// am_device + am_backend (drivers/amd/am_backend.hpp, which documents the slots).
//
// Programs run as the machine code they are (drivers/emu/shader interprets it): tg kernels
// compiled by the AMD backend (am_backend_compile.cpp) and code objects loaded with
// am_backend::load_program. The one addition is the host twin, for tests only: load_program below
// registers a host function with the emulated GPU under the code bytes at the kernel's entry
// (gpu::register_kernel_code), which then runs instead; the dispatch itself is the real one. tg
// kernels never get one. Twins stay because tests of the loader, the kernarg writer and the
// queues (am_backend_test, emu_device_test) check dispatch ordering with a kernel whose effect is
// computed on the host, independently of the interpreter they would otherwise depend on.
//
//   tg::device dev("AMD:EMU:gfx12:usb");             // emu_device_registration.cpp
//   auto& emu = dynamic_cast<tg::emu::emu_device&>(dev.impl());
//   auto p = emu.load_program(co, "add", args, {.workgroups = {4, 1, 1}, .workgroup_size = {64, 1, 1}}, twin);
//   p->launch(buffers, {});
//
// Programs keep a reference to their device and must not outlive it (tg::device drops its
// programs first). Not thread-safe: one host thread uses a device.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "drivers/amd/am_backend.hpp"
#include "drivers/emu/dispatch.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"

namespace tg::emu {

using emu_launch_shape = amd::am_launch_shape;

struct emu_device_config {
  gfx_gen gen = gfx_gen::gfx11;
  emulated_bus bus = emulated_bus::pci;
  std::uint64_t vram_bytes = 512ull << 20;
};

// "", "gfx11", "gfx12", "usb", "pci", "gfx12:usb", ...: what follows "AMD:EMU:" in a device name;
// usage_error listing the accepted forms otherwise.
emu_device_config parse_emu_device_args(std::string_view args);

class emu_device final : public amd::am_backend {
 public:
  explicit emu_device(const emu_device_config& config = {});
  explicit emu_device(std::shared_ptr<emulated_machine> machine);  // boots on a machine the caller made

  // Kernel `kernel` of `co` in VRAM, with `host_twin` run for its dispatches. At launch, the
  // buffers fill the first arguments of `args` (pointers) and the vars the rest.
  std::shared_ptr<program> load_program(const amd::code_object& co, std::string_view kernel,
                                        std::span<const amd::kernarg> args, emu_launch_shape shape, kernel_fn host_twin);

  emulated_machine& machine() { return *machine_; }
  gpu& emulated_gpu() { return machine_->device(); }

 private:
  std::shared_ptr<emulated_machine> machine_;  // also held by am_backend until after the transport
};

}  // namespace tg::emu
