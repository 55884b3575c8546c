// am_backend_registration.cpp: registers am_backend as "AMD": a real gfx11 / gfx12 GPU on PCI or
// behind the USB bridge, chosen by the rest of the device name (transport/device_spec.hpp):
// "AMD" or "AMD:0" (the first found, PCI first), "AMD:1", "AMD:PCI:0", "AMD:PCI:0000:03:00.0",
// "AMD:USB:0", "AMD:USB:3-2". The emulated GPU registers the more specific "AMD:EMU"
// (drivers/emu/emu_device.cpp), which the device registry tries first.
//
// Firmware comes from /lib/firmware/amdgpu, or from the folder TG_AMD_FIRMWARE names.
// Built into libtg, so every program that links it can open "AMD".
#include <cstdlib>
#include <memory>
#include <string>

#include <tg/core/error.hpp>

#include "drivers/amd/am_backend.hpp"
#include "runtime/transport/open_transport.hpp"

namespace tg::amd {
namespace {

std::shared_ptr<backend> make_am_backend(const std::string& args, const device_options& device) {
  transport::parse_device_spec(args);  // a malformed name is a usage_error before any bus is searched
  auto buses = std::make_shared<transport::system_buses>(transport::real_buses());
  std::unique_ptr<transport::device_transport> t = transport::open_transport(args, *buses);
  am_options options;
  if (!device.firmware_dir.empty()) options.firmware_dir = device.firmware_dir;
  else if (const char* dir = std::getenv("TG_AMD_FIRMWARE"); dir && *dir) options.firmware_dir = dir;
  return std::make_shared<am_backend>(args.empty() ? "AMD" : "AMD:" + args, std::move(t), options, std::move(buses));
}

const backend_registration registration("AMD", make_am_backend);

}  // namespace
}  // namespace tg::amd
