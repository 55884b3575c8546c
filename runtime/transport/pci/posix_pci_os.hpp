// posix_pci_os.hpp: pci_os over Linux: sysfs files, flock lock files, locked anonymous memory
// with physical addresses from /proc/self/pagemap (tinygrad/runtime/support/system.py: System,
// PCIDevice).
//
// The roots are options so that tests can point it at a temp-dir tree of plain files:
//   auto os = std::make_shared<posix_pci_os>();                                  // the real system
//   posix_pci_os fake({.sysfs_root = dir + "/devices", .lock_dir = dir});        // a test tree
//
// DMA memory needs the physical address of each page: pagemap gives PFN 0 to a process without
// CAP_SYS_ADMIN, which is a device_error telling to run as root. No IOMMU support: with one
// active the physical addresses are not bus addresses (the reference's System.system_paddrs has
// the same limit). VFIO is not implemented.
//
// Thread-safe: no state besides the options.
#pragma once
#include <string>

#include "runtime/transport/pci/pci_os.hpp"

namespace tg::transport::pci {

struct posix_pci_os_options {
  std::string sysfs_root = "/sys/bus/pci/devices";
  std::string lock_dir;  // empty: $TMPDIR, else /tmp
  std::string pagemap_path = "/proc/self/pagemap";
};

class posix_pci_os final : public pci_os {
 public:
  explicit posix_pci_os(posix_pci_os_options options = {});

  std::string device_path(const std::string& bus) const override;
  std::vector<std::string> list_devices() override;
  bool has_file(const std::string& bus, const std::string& name) override;
  std::string read_text(const std::string& bus, const std::string& name) override;
  void write_text(const std::string& bus, const std::string& name, const std::string& text) override;
  int open_rw_error(const std::string& bus, const std::string& name) override;
  std::optional<std::string> bound_driver(const std::string& bus) override;
  void read_config(const std::string& bus, std::uint32_t offset, std::span<std::byte> out) override;
  void write_config(const std::string& bus, std::uint32_t offset, std::span<const std::byte> in) override;
  std::unique_ptr<bar_window> map_resource(const std::string& bus, unsigned index, std::uint64_t size) override;
  std::string lock_path(const std::string& bus) const override;
  std::unique_ptr<os_lock> try_lock(const std::string& bus) override;
  std::unique_ptr<dma_region> allocate_dma(std::uint64_t bytes) override;

 private:
  std::string file_path(const std::string& bus, const std::string& name) const;

  posix_pci_os_options options_;
};

}  // namespace tg::transport::pci
