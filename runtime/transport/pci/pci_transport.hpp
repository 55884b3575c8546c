// pci_transport.hpp: a GPU on the host's PCI bus, owned from user space through Linux sysfs:
// config space through `config`, BARs mapped from `resourceN`, DMA memory from locked host pages
// (as tinygrad/runtime/support/system.py: PCIDevice). VFIO (PCIDevice's VFIO=1 path) is not
// implemented: sysfs only.
//
// Opening does what the reference does, in its order: take the lock file am_<bus>.lock, check
// write access to `enable`, refuse (or, with unbind_driver, unbind) a bound kernel driver, grow
// BAR0 to its largest Resizable-BAR size (failure ignored), enable the device, set bus mastering,
// read `resource` and map BARs 0 (VRAM), 2 (doorbells) and 5 (registers).
//
//   auto os = std::make_shared<tg::transport::pci::posix_pci_os>();
//   tg::transport::pci::pci_transport t(os, "0000:03:00.0");
//   std::uint32_t memsize_mib = t.bar(5).read32(0xDE3 * 4);        // RCC_CONFIG_MEMSIZE (amdev.py: _run_discovery)
//   std::unique_ptr<tg::transport::pci::pci_transport> first = open_pci_device(os, 0);
//
// Errors: device_error with what to do (another process holds the lock, no permission, a
// driver is bound); usage_error for an unknown device or a bad access. Not thread-safe.
#pragma once
#include <array>
#include <memory>
#include <string>

#include "runtime/transport/pci/pci_os.hpp"
#include "runtime/transport/transport.hpp"

namespace tg::transport::pci {

struct pci_open_options {
  // Write the bus id to <dev>/driver/unbind when a kernel driver holds the device, instead of
  // failing with instructions. Off by default: it takes the GPU away from the desktop.
  bool unbind_driver = false;
  // Grow BAR0 through resource0_resize before mapping it (as PCIDevice.resize_bar).
  bool resize_bar0 = true;
};

class pci_transport final : public device_transport {
 public:
  pci_transport(std::shared_ptr<pci_os> os, std::string bus, pci_open_options options = {});
  ~pci_transport() override;

  std::string name() const override;
  transport_kind kind() const override { return transport_kind::pci; }
  transport_limits limits() const override;

  std::uint32_t config_read(std::uint32_t offset, unsigned bytes) override;
  void config_write(std::uint32_t offset, std::uint32_t value, unsigned bytes) override;

  bar_region bar_info(unsigned index) const override;  // 0..5; size 0 when not implemented
  bar_window& bar(unsigned index) override;            // 0, 2 or 5

  std::unique_ptr<dma_region> allocate_dma(std::uint64_t bytes) override;
  // Writes "1" to <dev>/reset (a function-level reset; the kernel saves and restores config
  // space around it), then enables, sets bus mastering and maps the BARs again. Windows returned
  // by bar() before the reset are gone; call bar() again.
  void reset() override;

  const std::string& bus() const { return bus_; }

 private:
  void check_unknown_device();
  void take_lock();
  void check_permission();
  void check_driver();
  void resize_bar0();
  void enable_and_map();

  std::shared_ptr<pci_os> os_;
  std::string bus_;
  pci_open_options options_;
  std::unique_ptr<os_lock> lock_;
  std::array<bar_region, 6> bars_{};
  std::array<std::unique_ptr<bar_window>, 6> windows_;
};

// Opens the index-th device of list_pci_devices(*os); usage_error naming how many there are.
std::unique_ptr<pci_transport> open_pci_device(std::shared_ptr<pci_os> os, std::size_t index,
                                               pci_open_options options = {});
// Opens the device a discovery entry names (its name is "pci:" + bus id); usage_error for an
// entry of another transport.
std::unique_ptr<pci_transport> open_pci_device(std::shared_ptr<pci_os> os, const device_entry& entry,
                                               pci_open_options options = {});

}  // namespace tg::transport::pci
