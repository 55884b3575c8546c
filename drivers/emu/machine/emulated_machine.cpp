// emulated_machine.cpp: wiring one emulated GPU onto an emulated bus, and its firmware folder.
#include "drivers/emu/machine/emulated_machine.hpp"

#include <cstdlib>
#include <optional>
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

}  // namespace

gfx_gen parse_emulated_gen(std::string_view text) {
  if (text == "gfx11") return gfx_gen::gfx11;
  if (text == "gfx12") return gfx_gen::gfx12;
  if (const std::optional<gfx_gen> g = emulated_processor_gen(text)) return *g;
  throw usage_error(str("emulated GPU '", text, "': choose gfx11 or gfx1100 (an RX 7900 XTX), gfx1101 (an RX 7800 XT), "
                        "gfx12 or gfx1200 (an RX 9060), or gfx1201 (an RX 9070 XT)"));
}

std::string parse_emulated_processor(std::string_view text) {
  parse_emulated_gen(text);  // the error for a name that is neither
  return text == "gfx11" || text == "gfx12" ? std::string() : std::string(text);
}

emulated_bus parse_emulated_bus(std::string_view text) {
  if (text == "pci" || text == "PCI") return emulated_bus::pci;
  if (text == "usb" || text == "USB") return emulated_bus::usb;
  throw usage_error(str("emulated bus '", text, "': choose pci (a card in a slot) or usb (an ASM2464 dock)"));
}

emulated_machine::emulated_machine(const emulated_machine_config& config) : config_(config) {
  // Each machine has its own folder: its firmware (unless given) and the transports' lock files,
  // so that machines in concurrent tests (all their bridges are usb:1-2) do not lock each other out.
  const personality& chip = personality_of(config.gen, config.processor);  // usage_error before any work
  own_dir_ = make_temporary_folder();
  firmware_dir_ = config.firmware_dir.empty() ? own_dir_ / "firmware" : config.firmware_dir;
  std::filesystem::create_directories(own_dir_ / "locks");
  if (config.write_firmware) write_firmware_images(firmware_dir_, chip.target, /*seed=*/0x7467);

  gpu_config gc{.gen = config.gen, .processor = config.processor, .vram_bytes = config.vram_bytes};
  gc.mode1_reset_latency = config.mode1_reset_latency;
  pci_host_ = std::make_shared<emu_pci_host>();
  gpu* g = nullptr;
  if (config.bus == emulated_bus::pci) {
    g = &pci_host_->add_gpu("0000:c3:00.0", gc, chip.pci_device_id);
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
