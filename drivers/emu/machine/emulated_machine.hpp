// emulated_machine.hpp: a whole emulated setup to try tg's AMD driver without a card: one emulated
// gfx11 or gfx12 GPU (one of the cards of personality.hpp), either on an emulated PCI host (a fake sysfs) or behind an emulated ASM2464
// USB bridge (a fake libusb), plus a firmware folder in the Linux formats for it to boot from.
//
// buses() is what transport::open_transport takes, so the code that opens a real card opens this
// one: `tg-amd --emulate gfx12 --via usb info`, the end-to-end tests and the copy benchmark all
// go through it.
//
//   tg::emu::emulated_machine m({.gen = tg::memory::gfx_gen::gfx12, .bus = tg::emu::emulated_bus::usb});
//   auto t = tg::transport::open_transport("AMD", m.buses());
//   tg::amd::am_options o;  o.firmware_dir = m.firmware_dir();
//
// The GPU's worker thread runs from construction, as a powered card does. Not thread-safe; the
// machine must outlive every transport opened on it.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "drivers/emu/gpu.hpp"
#include "drivers/emu/pci/emu_pci_host.hpp"
#include "drivers/emu/usb/emu_bridge.hpp"
#include "runtime/transport/open_transport.hpp"

namespace tg::emu {

enum class emulated_bus { pci, usb };

struct emulated_machine_config {
  gfx_gen gen = gfx_gen::gfx11;
  std::string processor;  // the card (personality.hpp): "gfx1101"; empty: gen's first (gfx1100, gfx1200)
  std::uint64_t vram_bytes = 1ull << 30;
  emulated_bus bus = emulated_bus::pci;
  usb::bridge_config bridge{};          // the bridge's identity and limits (bus == usb)
  std::filesystem::path firmware_dir;   // empty: images are written to the machine's temporary folder
  bool write_firmware = true;           // false: leave the folder empty (missing-firmware tests)
  // The GPU's gpu_config::mode1_reset_latency: off the bus this long after a mode-1 reset (longer
  // than the SMU message's 500 ms settle, so a driver must poll for the card to come back).
  std::chrono::milliseconds mode1_reset_latency{700};
};

// "gfx11" / "gfx12" or a processor ("gfx1100", "gfx1101", "gfx1200", "gfx1201"), and "pci" / "usb",
// for command lines (usage_error otherwise). parse_emulated_processor gives "" for a bare generation.
gfx_gen parse_emulated_gen(std::string_view text);
std::string parse_emulated_processor(std::string_view text);
emulated_bus parse_emulated_bus(std::string_view text);

class emulated_machine {
 public:
  explicit emulated_machine(const emulated_machine_config& config);
  ~emulated_machine();  // stops the GPU; removes its temporary folder
  emulated_machine(const emulated_machine&) = delete;
  emulated_machine& operator=(const emulated_machine&) = delete;

  gpu& device();
  // The buses to search: the PCI host (empty when the GPU sits behind the bridge) and the USB
  // backend (the bridge, or one with no devices).
  transport::system_buses& buses() { return buses_; }
  usb::emu_bridge* bridge() { return bridge_.get(); }       // nullptr on PCI
  emu_pci_host* pci_host() { return pci_host_.get(); }
  const std::filesystem::path& firmware_dir() const { return firmware_dir_; }
  const emulated_machine_config& config() const { return config_; }

 private:
  emulated_machine_config config_;
  std::filesystem::path own_dir_;  // a temporary folder: firmware (unless given) and lock files
  std::filesystem::path firmware_dir_;
  std::shared_ptr<emu_pci_host> pci_host_;  // owns the GPU when it is on PCI
  std::unique_ptr<gpu> gpu_;                // the GPU behind the bridge
  std::shared_ptr<usb::emu_bridge> bridge_;
  transport::system_buses buses_;
};

}  // namespace tg::emu
