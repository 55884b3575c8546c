// emulated_machine.cpp: wiring one emulated GPU onto an emulated bus, and its firmware folder.
#include "drivers/emu/machine/emulated_machine.hpp"

#include <cstdlib>
#include <string>

#include "drivers/emu/firmware/emu_firmware.hpp"
#include <tg/core/error.hpp>

namespace tg::emu {
namespace {

// A USB bus with nothing on it: what the PCI setup offers for USB, so "AMD:USB" says "none found".
class empty_usb final : public transport::usb::usb_backend {
 public:
  std::vector<transport::usb::usb_device_info> list() override { return {}; }
  std::unique_ptr<transport::usb::usb_handle> open(const transport::usb::usb_device_info& d) override {
    throw device_error(str("usb:", int(d.bus), "-", int(d.address), ": no such device on the emulated USB bus"));
  }
};

std::filesystem::path make_temporary_folder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tg-emu-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw device_error(str("cannot create a temporary folder from ", pattern));
  return pattern;
}

std::uint16_t device_id_for(gfx_gen gen) { return gen == gfx_gen::gfx12 ? 0x7590 : 0x744C; }  // RX 9060 / RX 7900 XTX

}  // namespace

gfx_gen parse_emulated_gen(std::string_view text) {
  if (text == "gfx11" || text == "gfx1100") return gfx_gen::gfx11;
  if (text == "gfx12" || text == "gfx1200") return gfx_gen::gfx12;
  throw usage_error(str("emulated GPU '", text, "': choose gfx11 (an RX 7900 XTX, gfx1100) or gfx12 (an RX 9060, gfx1200)"));
}

emulated_bus parse_emulated_bus(std::string_view text) {
  if (text == "pci" || text == "PCI") return emulated_bus::pci;
  if (text == "usb" || text == "USB") return emulated_bus::usb;
  throw usage_error(str("emulated bus '", text, "': choose pci (a card in a slot) or usb (an ASM2464 dock)"));
}

emulated_machine::emulated_machine(const emulated_machine_config& config) : config_(config) {
  // Each machine has its own folder: its firmware (unless given) and the transports' lock files,
  // so that machines in concurrent tests (all their bridges are usb:1-2) do not lock each other out.
  own_dir_ = make_temporary_folder();
  firmware_dir_ = config.firmware_dir.empty() ? own_dir_ / "firmware" : config.firmware_dir;
  std::filesystem::create_directories(own_dir_ / "locks");
  if (config.write_firmware) write_firmware_images(firmware_dir_, config.gen, /*seed=*/0x7467);

  gpu_config gc{.gen = config.gen, .vram_bytes = config.vram_bytes};
  gc.mode1_reset_latency = config.mode1_reset_latency;
  pci_host_ = std::make_shared<emu_pci_host>();
  gpu* g = nullptr;
  if (config.bus == emulated_bus::pci) {
    g = &pci_host_->add_gpu("0000:c3:00.0", gc, device_id_for(config.gen));
    buses_.usb = std::make_shared<empty_usb>();
  } else {
    gpu_ = std::make_unique<gpu>(gc);
    g = gpu_.get();
    bridge_ = std::make_shared<usb::emu_bridge>(*g, config.bridge);
    buses_.usb = bridge_;
  }
  buses_.pci = pci_host_;
  buses_.usb_options.lock_directory = (own_dir_ / "locks").string();
  g->start();
}

gpu& emulated_machine::device() { return gpu_ ? *gpu_ : pci_host_->gpu_at("0000:c3:00.0"); }

emulated_machine::~emulated_machine() {
  device().stop();
  std::error_code ignored;
  std::filesystem::remove_all(own_dir_, ignored);
}

}  // namespace tg::emu
