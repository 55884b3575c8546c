// emu_device_registration.cpp: registers emu_device as "AMD:EMU": the emulated GPU on tg's AM
// driver. "AMD:EMU" is gfx11 on the emulated PCI host; a generation and a bus may follow
// ("AMD:EMU:gfx12", "AMD:EMU:usb", "AMD:EMU:gfx12:usb"), and a VRAM size ("AMD:EMU:usb:vram=256M"). Real cards are "AMD"
// (drivers/amd/am_backend_registration.cpp, in libtg); the registry tries "AMD:EMU" first.
//
// Linked whole into whatever uses tg_emu_device_dep (libtg is built before drivers/emu can add to
// it), so the static registration below always runs.
#include <memory>
#include <string>

#include "drivers/emu/emu_device.hpp"

namespace tg::emu {
namespace {

std::shared_ptr<backend> make_emu_device(const std::string& args, const device_options&) {
  return std::make_shared<emu_device>(parse_emu_device_args(args));
}

const backend_registration registration("AMD:EMU", make_emu_device);

}  // namespace
}  // namespace tg::emu
