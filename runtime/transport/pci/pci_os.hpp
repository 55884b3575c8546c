// pci_os.hpp: every operating-system call the PCI transport makes, behind one interface, so that
// the emulated PCI host (drivers/emu/pci/emu_pci_host.hpp) can stand in for Linux in tests.
//
// Devices are named by their bus id ("0000:03:00.0") and their files by the name sysfs gives
// them inside the device folder ("vendor", "enable", "driver/unbind", as tinygrad/runtime/support/
// system.py: PCIDevice uses them). The real implementation is posix_pci_os (sysfs, flock,
// /proc/self/pagemap); it holds no policy: which files to touch, in which order, and what an error
// should advise is pci_transport's job.
//
//   std::shared_ptr<pci_os> os = std::make_shared<posix_pci_os>();
//   for (const std::string& bus : os->list_devices()) std::string vendor = os->read_text(bus, "vendor");
//   std::unique_ptr<bar_window> mmio = os->map_resource(bus, 5, 2 << 20);
//
// Errors: device_error naming the path (device_path(bus) + "/" + name) and the OS's message.
// Thread-safety: implementations must allow calls from several threads on different devices;
// one device is used by one thread at a time.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/transport/transport.hpp"

namespace tg::transport::pci {

// A held device lock (am_<bus>.lock); released when destroyed.
class os_lock {
 public:
  virtual ~os_lock() = default;
};

class pci_os {
 public:
  virtual ~pci_os() = default;

  // The device's folder, for messages and for the commands an error suggests
  // ("/sys/bus/pci/devices/0000:03:00.0").
  virtual std::string device_path(const std::string& bus) const = 0;
  // Bus ids of every PCI function present (the entries of the devices folder), in any order.
  virtual std::vector<std::string> list_devices() = 0;

  // Small text files of the device folder. read_text returns the whole file (with its newline).
  virtual bool has_file(const std::string& bus, const std::string& name) = 0;
  virtual std::string read_text(const std::string& bus, const std::string& name) = 0;
  virtual void write_text(const std::string& bus, const std::string& name, const std::string& text) = 0;
  // 0 when `name` opens for reading and writing; otherwise the errno (EACCES, EPERM, ENOENT).
  virtual int open_rw_error(const std::string& bus, const std::string& name) = 0;
  // The name of the kernel driver bound to the device (the target of its `driver` link), if any.
  virtual std::optional<std::string> bound_driver(const std::string& bus) = 0;

  // pread / pwrite of the device's `config` file.
  virtual void read_config(const std::string& bus, std::uint32_t offset, std::span<std::byte> out) = 0;
  virtual void write_config(const std::string& bus, std::uint32_t offset, std::span<const std::byte> in) = 0;

  // Maps the first `size` bytes of `resource<index>`. The window lives independently of the os.
  virtual std::unique_ptr<bar_window> map_resource(const std::string& bus, unsigned index, std::uint64_t size) = 0;

  // An exclusive, non-blocking lock on the device's lock file; nullptr when another open file
  // (this process or another) holds it. lock_path names that file in messages.
  virtual std::string lock_path(const std::string& bus) const = 0;
  virtual std::unique_ptr<os_lock> try_lock(const std::string& bus) = 0;

  // `bytes` (a positive multiple of 4 KiB) of locked host memory and the bus address of each page.
  virtual std::unique_ptr<dma_region> allocate_dma(std::uint64_t bytes) = 0;
};

}  // namespace tg::transport::pci
