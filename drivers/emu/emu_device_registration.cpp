// emu_device_registration.cpp: registers emu_device as the "AMD" backend for "AMD:EMU".
//
// Linked whole into whatever uses tg_emu_device_dep (libtg is built before drivers/emu can add to
// it), so the static registration below always runs. "AMD:EMU" emulates gfx11; "AMD:EMU:gfx12"
// and "AMD:EMU:gfx11" choose the generation. Real AMD hardware is not driven from here.
#include <memory>
#include <string>

#include <tg/error.hpp>

#include "drivers/emu/emu_device.hpp"

namespace tg::emu {
namespace {

std::shared_ptr<backend> make_emu_device(const std::string& args) {
  if (args == "EMU" || args == "EMU:gfx11") return std::make_shared<emu_device>(emu_driver_config{.gen = gfx_gen::gfx11});
  if (args == "EMU:gfx12") return std::make_shared<emu_device>(emu_driver_config{.gen = gfx_gen::gfx12});
  throw usage_error(str("device 'AMD:", args, "': only the emulated GPU is available here: AMD:EMU, AMD:EMU:gfx11 or ",
                        "AMD:EMU:gfx12"));
}

const backend_registration registration("AMD", make_emu_device);

}  // namespace
}  // namespace tg::emu
