// emu_pci_host.hpp: an emulated PCI host with emulated GPUs on it, seen through transport::pci's
// pci_os: a fake sysfs device folder per GPU (vendor, device, class, enable, config, resource,
// resource0_resize, driver, reset), BARs mapped onto the GPU (BAR0 from its VRAM memfd, BAR2 and
// BAR5 routed to its doorbells and registers), DMA memory with fake pagemap addresses
// (emu_sysmem) and in-process lock files. The same pci_transport code that opens a real card
// opens these (tinygrad's mock GPU (test/mockgpu/amd)).
//
//   auto host = std::make_shared<tg::emu::emu_pci_host>();
//   tg::emu::gpu& g = host->add_gpu("0000:c3:00.0", {.gen = tg::emu::gfx_gen::gfx11}, 0x744C);
//   tg::transport::pci::pci_transport t(host, "0000:c3:00.0");
//   t.bar(0).write32(0x1000, 42);       // lands in g.vram()
//
// Each GPU has the emu_sysmem attached as its system bus, so its engines reach DMA memory.
// Switches simulate what goes wrong on real machines: a kernel driver bound (set_driver), no
// permission on the sysfs files (set_permission_denied), no GPUs visible (set_devices_hidden).
// A reset through `reset` counts (reset_count) and runs the hook set by set_reset_hook.
//
// Thread-safe: one mutex guards the host's state; BAR windows go straight to the (thread-safe)
// gpu. The host must outlive the windows it maps.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "drivers/emu/gpu.hpp"
#include "drivers/emu/pci/emu_sysmem.hpp"
#include "drivers/emu/pci/pci_config_space.hpp"
#include "runtime/transport/pci/pci_os.hpp"

namespace tg::emu {

class emu_pci_host final : public transport::pci::pci_os {
 public:
  emu_pci_host();
  ~emu_pci_host() override;

  // A GPU at `bus` ("0000:c3:00.0") with VRAM, doorbell and MMIO sizes from `config`, its BARs
  // assigned as firmware would (BAR0 in the 64-bit window, BAR2/BAR5 below 4 GiB). usage_error
  // when the bus id is taken.
  gpu& add_gpu(const std::string& bus, const gpu_config& config, std::uint16_t device_id = 0x744C);
  gpu& gpu_at(const std::string& bus);
  pci_config_space& config_space(const std::string& bus);

  void set_driver(const std::string& bus, std::optional<std::string> driver);  // "amdgpu" or nullopt
  void set_permission_denied(bool denied);  // sysfs files open read-only, as for a normal user
  void set_devices_hidden(bool hidden);     // the bus looks empty
  void set_reset_hook(const std::string& bus, std::function<void(gpu&)> hook);
  std::uint64_t reset_count(const std::string& bus);

  emu_sysmem& sysmem() { return *sysmem_; }

  // ---- pci_os
  std::string device_path(const std::string& bus) const override;
  std::vector<std::string> list_devices() override;
  bool has_file(const std::string& bus, const std::string& name) override;
  std::string read_text(const std::string& bus, const std::string& name) override;
  void write_text(const std::string& bus, const std::string& name, const std::string& text) override;
  int open_rw_error(const std::string& bus, const std::string& name) override;
  std::optional<std::string> bound_driver(const std::string& bus) override;
  void read_config(const std::string& bus, std::uint32_t offset, std::span<std::byte> out) override;
  void write_config(const std::string& bus, std::uint32_t offset, std::span<const std::byte> in) override;
  std::unique_ptr<transport::bar_window> map_resource(const std::string& bus, unsigned index,
                                                      std::uint64_t size) override;
  std::string lock_path(const std::string& bus) const override;
  std::unique_ptr<transport::pci::os_lock> try_lock(const std::string& bus) override;
  std::unique_ptr<transport::dma_region> allocate_dma(std::uint64_t bytes) override;

 private:
  struct function;
  struct lock_table;
  function& find(const std::string& bus);  // device_error (ENOENT-like) when absent or hidden
  function* find_visible(const std::string& bus);
  std::string resource_text(const function& f) const;
  void write_file(function& f, const std::string& name, const std::string& text);

  std::shared_ptr<emu_sysmem> sysmem_;  // declared first: outlives the gpus it is attached to
  std::vector<std::unique_ptr<function>> functions_;
  std::shared_ptr<lock_table> locks_;
  bool permission_denied_ = false, hidden_ = false;
  mutable std::mutex mutex_;
};

}  // namespace tg::emu
