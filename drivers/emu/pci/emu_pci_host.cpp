// emu_pci_host.cpp: a fake sysfs over emulated GPUs (see emu_pci_host.hpp).
#include "drivers/emu/pci/emu_pci_host.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "drivers/emu/pci/emu_register_bar.hpp"
#include "runtime/transport/pci/mapped_bar.hpp"
#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::emu {

namespace {

constexpr std::uint32_t command_reg = 0x04;
constexpr std::uint32_t command_io = 1u << 0, command_memory = 1u << 1, command_master = 1u << 2;
constexpr std::uint32_t rebar_cap_reg = 0x104, rebar_ctrl_reg = 0x108;  // pci_config_space's ReBAR
// Where firmware puts each function's BARs: BAR0 in the 64-bit window, one 256 GiB slot per GPU;
// BAR5 and BAR2 in a 16 MiB slot below 4 GiB, 8 MiB each.
constexpr std::uint64_t bar0_window = 0x80'0000'0000, bar0_stride = 0x40'0000'0000;
constexpr std::uint64_t low_window = 0xE000'0000, low_stride = 0x0100'0000, low_half = 0x0080'0000;
constexpr std::size_t max_functions = 16;
// Linux resource flags (include/linux/ioport.h): MEM 0x200, PREFETCH 0x2000, SIZEALIGN 0x40000,
// MEM_64 0x100000; the low bits repeat the BAR's type bits, as the kernel prints them.
constexpr std::uint64_t flags_bar0 = 0x0014'220C, flags_bar32 = 0x0004'0200;

}  // namespace

struct emu_pci_host::function {
  std::string bus;
  std::unique_ptr<gpu> g;
  pci_config_space config;
  std::optional<std::string> driver;
  bool enabled = false;
  std::uint64_t resets = 0;
  std::function<void(gpu&)> reset_hook;
};

struct emu_pci_host::lock_table {
  std::mutex mutex;
  std::set<std::string> held;
};

namespace {

class table_lock final : public transport::pci::os_lock {
 public:
  table_lock(std::shared_ptr<void> table, std::function<void()> release)
      : table_(std::move(table)), release_(std::move(release)) {}
  ~table_lock() override { release_(); }

 private:
  std::shared_ptr<void> table_;  // keeps the table alive for release_
  std::function<void()> release_;
};

}  // namespace

emu_pci_host::emu_pci_host() : sysmem_(std::make_shared<emu_sysmem>()), locks_(std::make_shared<lock_table>()) {}

emu_pci_host::~emu_pci_host() {
  for (auto& f : functions_) f->g->attach_system_bus(nullptr);
}

gpu& emu_pci_host::add_gpu(const std::string& bus, const gpu_config& config, std::uint16_t device_id) {
  std::lock_guard guard(mutex_);
  if (std::any_of(functions_.begin(), functions_.end(), [&](const auto& f) { return f->bus == bus; }))
    throw usage_error(str("emu pci: bus id ", bus, " is already taken"));
  if (functions_.size() == max_functions)
    throw usage_error(str("emu pci: at most ", max_functions, " GPUs per emulated host"));
  if (config.doorbell_bytes > low_half || config.mmio_bytes > low_half)
    throw usage_error(str("emu pci: BAR2 (", config.doorbell_bytes, " bytes) and BAR5 (", config.mmio_bytes,
                          " bytes) must fit in 8 MiB each"));
  const std::uint64_t k = functions_.size();
  auto f = std::make_unique<function>(function{
      bus, std::make_unique<gpu>(config),
      pci_config_space({.device_id = device_id, .vram_bytes = config.vram_bytes,
                        .doorbell_bytes = config.doorbell_bytes, .mmio_bytes = config.mmio_bytes})});
  const std::uint64_t bar0 = bar0_window + k * bar0_stride, low = low_window + k * low_stride;
  f->config.write(0x10, std::uint32_t(bar0), 4);
  f->config.write(0x14, std::uint32_t(bar0 >> 32), 4);
  f->config.write(0x24, std::uint32_t(low), 4);             // BAR5: MMIO
  f->config.write(0x18, std::uint32_t(low + low_half), 4);  // BAR2: doorbells
  f->g->attach_system_bus(sysmem_.get());
  functions_.push_back(std::move(f));
  return *functions_.back()->g;
}

emu_pci_host::function* emu_pci_host::find_visible(const std::string& bus) {
  if (hidden_) return nullptr;
  for (auto& f : functions_)
    if (f->bus == bus) return f.get();
  return nullptr;
}

emu_pci_host::function& emu_pci_host::find(const std::string& bus) {
  if (function* f = find_visible(bus)) return *f;
  throw device_error(str("emu pci: ", device_path(bus), " does not exist: ", std::strerror(ENOENT)));
}

gpu& emu_pci_host::gpu_at(const std::string& bus) {
  std::lock_guard guard(mutex_);
  for (auto& f : functions_)
    if (f->bus == bus) return *f->g;
  throw usage_error(str("emu pci: no GPU at ", bus));
}

pci_config_space& emu_pci_host::config_space(const std::string& bus) {
  std::lock_guard guard(mutex_);
  for (auto& f : functions_)
    if (f->bus == bus) return f->config;
  throw usage_error(str("emu pci: no GPU at ", bus));
}

void emu_pci_host::set_driver(const std::string& bus, std::optional<std::string> driver) {
  std::lock_guard guard(mutex_);
  find(bus).driver = std::move(driver);
}

void emu_pci_host::set_permission_denied(bool denied) {
  std::lock_guard guard(mutex_);
  permission_denied_ = denied;
}

void emu_pci_host::set_devices_hidden(bool hidden) {
  std::lock_guard guard(mutex_);
  hidden_ = hidden;
}

void emu_pci_host::set_reset_hook(const std::string& bus, std::function<void(gpu&)> hook) {
  std::lock_guard guard(mutex_);
  find(bus).reset_hook = std::move(hook);
}

std::uint64_t emu_pci_host::reset_count(const std::string& bus) {
  std::lock_guard guard(mutex_);
  return find(bus).resets;
}

std::string emu_pci_host::device_path(const std::string& bus) const { return "/sys/bus/pci/devices/" + bus; }

std::vector<std::string> emu_pci_host::list_devices() {
  std::lock_guard guard(mutex_);
  std::vector<std::string> buses;
  if (!hidden_)
    for (auto& f : functions_) buses.push_back(f->bus);
  return buses;
}

bool emu_pci_host::has_file(const std::string& bus, const std::string& name) {
  static const std::set<std::string> always = {"vendor", "device", "class", "enable", "config", "resource",
                                               "resource0", "resource2", "resource5", "resource0_resize", "reset"};
  std::lock_guard guard(mutex_);
  const function* f = find_visible(bus);
  if (!f) return false;
  return always.count(name) || (f->driver && (name == "driver" || name == "driver/unbind"));
}

std::string emu_pci_host::resource_text(const function& f) const {
  std::string text;
  for (unsigned i = 0; i < 7; ++i) {  // BARs 0-5 and the expansion ROM, as sysfs lists them
    const std::uint64_t start = i < 6 ? f.config.bar_address(i) : 0, size = i < 6 ? f.config.bar_size(i) : 0;
    const std::uint64_t flags = size == 0 ? 0 : i == 0 ? flags_bar0 : flags_bar32;
    text += str(hex{size ? start : 0, 16}, ' ', hex{size ? start + size - 1 : 0, 16}, ' ', hex{flags, 16}, '\n');
  }
  return text;
}

std::string emu_pci_host::read_text(const std::string& bus, const std::string& name) {
  std::lock_guard guard(mutex_);
  function& f = find(bus);
  if (name == "vendor" || name == "device") return str(hex{f.config.read(name == "vendor" ? 0x00 : 0x02, 2), 4}, '\n');
  if (name == "class") return str(hex{f.config.read(0x08, 4) >> 8, 6}, '\n');
  if (name == "enable") return f.enabled ? "1\n" : "0\n";
  if (name == "resource") return resource_text(f);
  if (name == "resource0_resize") {  // the supported ReBAR sizes (bit n: 2^n MiB), as Linux prints them
    char buf[32];
    std::snprintf(buf, sizeof buf, "%016llx\n", (unsigned long long)(f.config.read(rebar_cap_reg, 4) >> 4));
    return buf;
  }
  throw device_error(str("emu pci: reading ", device_path(bus), "/", name, " failed: ", std::strerror(EIO)));
}

void emu_pci_host::write_text(const std::string& bus, const std::string& name, const std::string& text) {
  std::lock_guard guard(mutex_);
  function& f = find(bus);
  if (permission_denied_)
    throw device_error(str("emu pci: opening ", device_path(bus), "/", name, " failed: ", std::strerror(EACCES)));
  write_file(f, name, text);
}

void emu_pci_host::write_file(function& f, const std::string& name, const std::string& text) {
  const std::string value = text.substr(0, text.find_last_not_of(" \n") + 1);
  auto fail = [&](int err) {
    throw device_error(str("emu pci: writing \"", value, "\" to ", device_path(f.bus), "/", name,
                           " failed: ", std::strerror(err)));
  };
  if (name == "enable") {
    // Like pci_enable_device: decoding on; disabling drops bus mastering.
    const std::uint32_t command = f.config.read(command_reg, 2);
    if (value == "1") f.config.write(command_reg, command | command_io | command_memory, 2);
    else if (value == "0") f.config.write(command_reg, command & ~command_master, 2);
    else fail(EINVAL);
    f.enabled = value == "1";
  } else if (name == "reset") {
    if (value != "1") fail(EINVAL);
    ++f.resets;  // the kernel saves and restores config space around the reset: it stays as it is
    if (f.reset_hook) f.reset_hook(*f.g);
  } else if (name == "resource0_resize") {
    if (f.driver) fail(EBUSY);  // Linux refuses while a driver holds the device
    unsigned n = 0;
    auto [end, err] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (err != std::errc() || end != value.data() + value.size() || n >= 28 ||
        !(f.config.read(rebar_cap_reg, 4) >> (n + 4) & 1))
      fail(EINVAL);
    f.config.write(rebar_ctrl_reg, (f.config.read(rebar_ctrl_reg, 4) & ~0x1F00u) | n << 8, 4);
  } else if (name == "driver/unbind" && f.driver) {
    if (value != f.bus) fail(ENODEV);
    f.driver.reset();
  } else {
    fail(ENOENT);
  }
}

int emu_pci_host::open_rw_error(const std::string& bus, const std::string& name) {
  if (!has_file(bus, name)) return ENOENT;
  std::lock_guard guard(mutex_);
  return permission_denied_ ? EACCES : 0;
}

std::optional<std::string> emu_pci_host::bound_driver(const std::string& bus) {
  std::lock_guard guard(mutex_);
  const function* f = find_visible(bus);
  return f ? f->driver : std::nullopt;
}

void emu_pci_host::read_config(const std::string& bus, std::uint32_t offset, std::span<std::byte> out) {
  std::lock_guard guard(mutex_);
  function& f = find(bus);
  if (offset > 4096 || out.size() > 4096 - offset)
    throw device_error(str("emu pci: reading ", out.size(), " bytes at ", offset, " of ", device_path(bus),
                           "/config: past its 4096 bytes"));
  for (std::size_t i = 0; i < out.size();) {  // natural accesses, as the kernel splits a pread
    const std::uint32_t at = offset + std::uint32_t(i);
    const unsigned n = at % 4 == 0 && out.size() - i >= 4 ? 4 : at % 2 == 0 && out.size() - i >= 2 ? 2 : 1;
    const std::uint32_t v = f.config.read(at, n);
    for (unsigned b = 0; b < n; ++b) out[i + b] = std::byte(v >> (8 * b));
    i += n;
  }
}

void emu_pci_host::write_config(const std::string& bus, std::uint32_t offset, std::span<const std::byte> in) {
  std::lock_guard guard(mutex_);
  function& f = find(bus);
  if (permission_denied_)
    throw device_error(str("emu pci: opening ", device_path(bus), "/config failed: ", std::strerror(EACCES)));
  if (offset > 4096 || in.size() > 4096 - offset)
    throw device_error(str("emu pci: writing ", in.size(), " bytes at ", offset, " of ", device_path(bus),
                           "/config: past its 4096 bytes"));
  for (std::size_t i = 0; i < in.size();) {
    const std::uint32_t at = offset + std::uint32_t(i);
    const unsigned n = at % 4 == 0 && in.size() - i >= 4 ? 4 : at % 2 == 0 && in.size() - i >= 2 ? 2 : 1;
    std::uint32_t v = 0;
    for (unsigned b = 0; b < n; ++b) v |= std::uint32_t(in[i + b]) << (8 * b);
    f.config.write(at, v, n);
    i += n;
  }
}

std::unique_ptr<transport::bar_window> emu_pci_host::map_resource(const std::string& bus, unsigned index,
                                                                  std::uint64_t size) {
  std::lock_guard guard(mutex_);
  function& f = find(bus);
  const std::string what = str("emu pci:", bus, " BAR", index);
  if ((index != 0 && index != 2 && index != 5) || size == 0 || size > f.config.bar_size(index))
    throw device_error(str("emu pci: mmap of ", size, " bytes of ", device_path(bus), "/resource", index,
                           " failed: ", std::strerror(EINVAL), " (BAR size ", f.config.bar_size(index), ")"));
  if (index == 0)  // a BAR larger than VRAM maps only VRAM: the memfd ends there
    return std::make_unique<transport::pci::mapped_bar>(f.g->vram().fd(), std::min(size, f.g->vram().size_bytes()),
                                                        false, what);
  return std::make_unique<emu_register_bar>(
      *f.g, index == 2 ? emu_register_bar::kind::doorbell : emu_register_bar::kind::mmio, size, what);
}

std::string emu_pci_host::lock_path(const std::string& bus) const { return "emu:/tmp/am_" + bus + ".lock"; }

std::unique_ptr<transport::pci::os_lock> emu_pci_host::try_lock(const std::string& bus) {
  std::shared_ptr<lock_table> table = locks_;
  std::lock_guard guard(table->mutex);
  if (!table->held.insert(bus).second) return nullptr;
  lock_table* t = table.get();
  return std::make_unique<table_lock>(table, [t, bus] {
    std::lock_guard g(t->mutex);
    t->held.erase(bus);
  });
}

std::unique_ptr<transport::dma_region> emu_pci_host::allocate_dma(std::uint64_t bytes) {
  return sysmem_->allocate(bytes);
}

}  // namespace tg::emu
