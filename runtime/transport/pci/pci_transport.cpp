// pci_transport.cpp: opening a GPU through sysfs and serving the transport interface from it
// (see pci_transport.hpp).
#include "runtime/transport/pci/pci_transport.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "runtime/transport/pci/host_dma_region.hpp"
#include "runtime/transport/pci/pci_devices.hpp"
#include "runtime/transport/pci/pci_text.hpp"
#include <tg/core/error.hpp>

namespace tg::transport::pci {

namespace {

constexpr std::uint32_t command_reg = 0x04;
constexpr std::uint32_t command_memory = 1u << 1, command_master = 1u << 2;  // pci_regs.h PCI_COMMAND_*
constexpr unsigned mapped_bars[] = {0, 2, 5};

}  // namespace

pci_transport::pci_transport(std::shared_ptr<pci_os> os, std::string bus, pci_open_options options)
    : os_(std::move(os)), bus_(std::move(bus)), options_(options) {
  check_unknown_device();
  take_lock();
  check_permission();
  check_driver();
  if (options_.resize_bar0) resize_bar0();
  enable_and_map();
}

pci_transport::~pci_transport() = default;

std::string pci_transport::name() const { return pci_device_name(bus_); }

transport_limits pci_transport::limits() const {
  // Every BAR is mapped: no chunking. A small BAR0 shows in bar_info(0).size; keeping CPU
  // accesses inside it is the driver's business (the reference: PCIIfaceBase.is_bar_small).
  return {.max_write_chunk = 0, .max_read_chunk = 0, .cpu_mapped_vram = true};
}

void pci_transport::check_unknown_device() {
  std::optional<std::uint64_t> vendor, device;
  if (os_->has_file(bus_, "vendor")) {
    vendor = parse_hex(os_->read_text(bus_, "vendor"));
    device = parse_hex(os_->read_text(bus_, "device"));
  } else {
    throw usage_error(str("pci: no PCI device ", bus_, " (", os_->device_path(bus_), " does not exist)"));
  }
  if (!vendor || !device || !find_known_gpu(std::uint16_t(*vendor), std::uint16_t(*device)))
    throw usage_error(str("pci: ", bus_, " (vendor ", hex{vendor.value_or(0)}, ", device ", hex{device.value_or(0)},
                          ") is not a GPU tg supports; `tg-amd list` shows those that are"));
}

void pci_transport::take_lock() {
  lock_ = os_->try_lock(bus_);
  if (!lock_)
    throw device_error(str("pci: failed to acquire lock file ", os_->lock_path(bus_), ": another process (or another ",
                           "transport in this one) has ", bus_, " open; close it first"));
}

void pci_transport::check_permission() {
  const int err = os_->open_rw_error(bus_, "enable");
  if (err == 0) return;
  const std::string path = os_->device_path(bus_) + "/enable";
  if (err == EACCES || err == EPERM)
    throw device_error(str("pci: no write access to ", path, " (", std::strerror(err), "): run as root or grant write ",
                           "access to ", path, " and the device's other sysfs files"));
  throw device_error(str("pci: opening ", path, " for writing failed: ", std::strerror(err)));
}

void pci_transport::check_driver() {
  std::optional<std::string> driver = os_->bound_driver(bus_);
  if (!driver) return;
  const std::string unbind = os_->device_path(bus_) + "/driver/unbind";
  if (!options_.unbind_driver)
    throw device_error(str("pci: driver ", *driver, " is bound to ", bus_, "; unbind it with `echo ", bus_,
                           " | sudo tee ", unbind, "` or `sudo modprobe -r ", *driver,
                           "` (every GPU it drives), or open with unbind_driver = true"));
  os_->write_text(bus_, "driver/unbind", bus_);
  if (std::optional<std::string> still = os_->bound_driver(bus_))
    throw device_error(str("pci: driver ", *still, " is still bound to ", bus_, " after writing ", bus_, " to ", unbind));
}

void pci_transport::resize_bar0() {
  // resource0_resize lists the supported sizes as a hex mask (bit n: 2^n MiB); writing a bit
  // index selects that size. The kernel refuses while the BAR is in use; the BAR then stays as
  // it is, which the driver copes with (PCIIfaceBase.__init__ in tinygrad/runtime/support/system.py
  // ignores the failure too), so a failure is not an error.
  if (!os_->has_file(bus_, "resource0_resize")) return;
  try {
    const std::optional<std::uint64_t> sizes = parse_hex(os_->read_text(bus_, "resource0_resize"));
    if (!sizes || *sizes == 0) return;
    os_->write_text(bus_, "resource0_resize", str(std::bit_width(*sizes) - 1));
  } catch (const device_error&) {
  }
}

void pci_transport::enable_and_map() {
  os_->write_text(bus_, "enable", "1");
  const std::uint32_t command = config_read(command_reg, 2);
  config_write(command_reg, command | command_memory | command_master, 2);
  config_read(command_reg, 2);  // reading back flushes the posted write (PCIDevice.write_config_flush)

  const std::string text = os_->read_text(bus_, "resource");
  const std::optional<std::vector<bar_region>> parsed = parse_resource(text);
  if (!parsed || parsed->size() < 6)
    throw device_error(str("pci: ", os_->device_path(bus_), "/resource does not list 6 BARs as \"start end flags\" ",
                           "lines: \"", text, "\""));
  std::copy_n(parsed->begin(), 6, bars_.begin());
  for (unsigned i : mapped_bars) {
    if (bars_[i].size == 0)
      throw device_error(str("pci: BAR", i, " of ", bus_, " is not assigned (", os_->device_path(bus_),
                             "/resource shows size 0); the GPU needs BARs 0, 2 and 5"));
    windows_[i] = os_->map_resource(bus_, i, bars_[i].size);
  }
}

namespace {

void check_config_access(const std::string& name, std::uint32_t offset, unsigned bytes) {
  if ((bytes != 1 && bytes != 2 && bytes != 4) || offset % bytes != 0 || offset + bytes > 4096)
    throw usage_error(str(name, ": config access of ", bytes, " bytes at ", hex{offset},
                          " is not a naturally aligned 1, 2 or 4-byte access inside the 4 KiB config space"));
}

}  // namespace

std::uint32_t pci_transport::config_read(std::uint32_t offset, unsigned bytes) {
  check_config_access(name(), offset, bytes);
  std::byte buf[4]{};
  os_->read_config(bus_, offset, std::span(buf, bytes));
  std::uint32_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v |= std::uint32_t(buf[i]) << (8 * i);  // config space is little-endian
  return v;
}

void pci_transport::config_write(std::uint32_t offset, std::uint32_t value, unsigned bytes) {
  check_config_access(name(), offset, bytes);
  std::byte buf[4];
  for (unsigned i = 0; i < bytes; ++i) buf[i] = std::byte(value >> (8 * i));
  os_->write_config(bus_, offset, std::span<const std::byte>(buf, bytes));
}

bar_region pci_transport::bar_info(unsigned index) const {
  if (index >= 6) throw usage_error(str(name(), ": there is no BAR", index, " (a type-0 function has BARs 0-5)"));
  return bars_[index];
}

bar_window& pci_transport::bar(unsigned index) {
  if (index >= 6 || !windows_[index])
    throw usage_error(str(name(), ": BAR", index, " is not mapped (the transport maps BARs 0, 2 and 5)"));
  return *windows_[index];
}

std::unique_ptr<dma_region> pci_transport::allocate_dma(std::uint64_t bytes) {
  check_dma_size(name().c_str(), bytes);
  return os_->allocate_dma(bytes);
}

void pci_transport::reset() {
  for (auto& w : windows_) w.reset();  // no mapping may outlive the BAR assignment it was made for
  os_->write_text(bus_, "reset", "1");
  enable_and_map();
}

std::unique_ptr<pci_transport> open_pci_device(std::shared_ptr<pci_os> os, std::size_t index,
                                               pci_open_options options) {
  const std::vector<device_entry> devices = list_pci_devices(*os);
  if (index >= devices.size()) {
    std::string names;
    for (const device_entry& d : devices) names += (names.empty() ? "" : ", ") + d.name;
    throw usage_error(str("pci: no supported GPU at index ", index, ": found ", devices.size(),
                          names.empty() ? "" : " (" + names + ")"));
  }
  return open_pci_device(std::move(os), devices[index], options);
}

std::unique_ptr<pci_transport> open_pci_device(std::shared_ptr<pci_os> os, const device_entry& entry,
                                               pci_open_options options) {
  const std::string prefix = pci_device_name("");
  if (entry.kind != transport_kind::pci || entry.name.rfind(prefix, 0) != 0)
    throw usage_error(str("pci: \"", entry.name, "\" is not a PCI device entry (expected \"", prefix, "<bus id>\")"));
  return std::make_unique<pci_transport>(std::move(os), entry.name.substr(prefix.size()), options);
}

}  // namespace tg::transport::pci
