// pcie_fabric.cpp: routing of config and memory TLPs behind the emulated bridge (see pcie_fabric.hpp).
#include "drivers/emu/usb/pcie_fabric.hpp"

#include <algorithm>
#include <cstring>

namespace tg::emu::usb {

namespace {

constexpr unsigned gpu_bus = 4;  // tinygrad/runtime/support/usb.py: bridge buses 0..3, the GPU on bus 4

std::uint32_t load32(std::span<const std::byte> bytes, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, bytes.data() + at, 4);  // little-endian host, little-endian PCIe payload
  return v;
}

void store32(std::span<std::byte> bytes, std::size_t at, std::uint32_t v) { std::memcpy(bytes.data() + at, &v, 4); }

std::uint32_t lane_mask(std::uint8_t byte_enable) {
  std::uint32_t mask = 0;
  for (unsigned i = 0; i < 4; ++i)
    if (byte_enable >> i & 1) mask |= 0xFFu << (8 * i);
  return mask;
}

// A config write with byte enables, as the naturally aligned accesses a config space takes.
template <class Space>
void write_lanes(Space& space, std::uint16_t reg, std::uint8_t byte_enable, std::uint32_t value) {
  switch (byte_enable & 0xF) {
    case 0xF: space.write(reg, value, 4); return;
    case 0x3: space.write(reg, value & 0xFFFF, 2); return;
    case 0xC: space.write(reg + 2, value >> 16, 2); return;
    default:
      for (unsigned i = 0; i < 4; ++i)
        if (byte_enable >> i & 1) space.write(reg + i, value >> (8 * i) & 0xFF, 1);
  }
}

}  // namespace

pcie_fabric::pcie_fabric(gpu& g, const pci_function_config& function, bool route_config_by_bus_numbers)
    : gpu_(g), gpu_config_(function), resets_seen_(g.mode1_resets()),
      route_by_bus_numbers_(route_config_by_bus_numbers) {}

void pcie_fabric::follow_resets() const {
  if (const std::uint64_t n = gpu_.mode1_resets(); n != resets_seen_) {
    resets_seen_ = n;
    gpu_config_.reset_header();
  }
}

// Type 0 reaches bus 0 (the first port) only; Type 1 to bus b passes ports 0..b-1, each of which
// must forward b and have the next bus as its secondary (the ports are chained one per bus).
pcie_fabric::route pcie_fabric::route_config(const config_target& t, unsigned& port) const {
  if (t.device != 0 || t.function != 0 || t.bus > gpu_bus) return route::none;
  if (t.type1 != (t.bus != 0)) return route::none;
  if (route_by_bus_numbers_)
    for (unsigned k = 0; k < t.bus; ++k)
      if (!ports_[k].forwards(t.bus) || ports_[k].secondary_bus() != k + 1) return route::none;
  port = t.bus;
  return t.bus == gpu_bus ? route::gpu : route::bridge;
}

tlp_completion pcie_fabric::config_read(const config_target& t) {
  unsigned port = 0;
  switch (route_config(t, port)) {
    case route::bridge: return {.data = ports_[port].read(t.reg, 4)};
    case route::gpu:
      if (!link_up_) return {.delivered = false};
      follow_resets();
      return {.data = gpu_config_.read(t.reg, 4)};
    case route::none: break;
  }
  return {.data = 0xFFFF'FFFF, .status = completion_unsupported};
}

tlp_completion pcie_fabric::config_write(const config_target& t, std::uint8_t byte_enable, std::uint32_t value) {
  unsigned port = 0;
  switch (route_config(t, port)) {
    case route::bridge: write_lanes(ports_[port], t.reg, byte_enable, value); return {};
    case route::gpu:
      if (!link_up_) return {.delivered = false};
      follow_resets();
      write_lanes(gpu_config_, t.reg, byte_enable, value);
      return {};
    case route::none: break;
  }
  return {.status = completion_unsupported};
}

std::optional<bar_hit> pcie_fabric::decode(std::uint64_t address) const {
  if (!link_up_) return std::nullopt;
  follow_resets();
  return gpu_config_.decode(address);
}

std::uint64_t pcie_fabric::claimable_bytes(const bar_hit& hit, std::uint64_t max_bytes) const {
  std::uint64_t end = gpu_config_.bar_size(hit.index);
  // BAR0 may be larger than VRAM (ReBAR sizes are powers of two); past VRAM nothing answers.
  if (hit.index == 0) end = std::min(end, gpu_.vram().size_bytes());
  return hit.offset >= end ? 0 : std::min(max_bytes, end - hit.offset);
}

void pcie_fabric::write_bar(const bar_hit& hit, std::span<const std::byte> bytes) {
  if (hit.index == 0) return gpu_.vram().write({hit.offset}, bytes);
  for (std::size_t i = 0; i < bytes.size();) {
    const std::uint64_t at = hit.offset + i;
    const std::uint32_t lo = load32(bytes, i);
    if (hit.index == 5) {
      gpu_.mmio_write32(at, lo);
      i += 4;
    } else if (at % 8 == 0 && i + 8 <= bytes.size()) {  // a whole 64-bit doorbell store
      gpu_.write_doorbell64(at, std::uint64_t(load32(bytes, i + 4)) << 32 | lo);
      i += 8;
    } else {  // one 32-bit half: keep the other half's current value
      const std::uint64_t slot = at & ~7ull, old = gpu_.read_doorbell64(slot);
      const std::uint64_t merged = at % 8 == 0 ? (old & 0xFFFF'FFFF'0000'0000ull) | lo
                                               : (old & 0xFFFF'FFFFull) | std::uint64_t(lo) << 32;
      gpu_.write_doorbell64(slot, merged);
      i += 4;
    }
  }
}

void pcie_fabric::read_bar(const bar_hit& hit, std::span<std::byte> out) {
  if (hit.index == 0) return gpu_.vram().read({hit.offset}, out);
  for (std::size_t i = 0; i < out.size(); i += 4) {
    const std::uint64_t at = hit.offset + i;
    const std::uint32_t v = hit.index == 5 ? gpu_.mmio_read32(at)
                                           : std::uint32_t(gpu_.read_doorbell64(at & ~7ull) >> (8 * (at & 4)));
    store32(out, i, v);
  }
}

std::uint64_t pcie_fabric::memory_write(std::uint64_t address, std::span<const std::byte> bytes) {
  std::uint64_t unclaimed = 0;
  while (!bytes.empty()) {
    const std::optional<bar_hit> hit = decode(address);
    std::uint64_t n = hit ? claimable_bytes(*hit, bytes.size()) : 0;
    if (n == 0) {
      ++unclaimed;  // posted: dropped without a word, as on PCIe
      n = 4;
    } else {
      write_bar(*hit, bytes.first(n));
    }
    address += n;
    bytes = bytes.subspan(n);
  }
  return unclaimed;
}

std::uint64_t pcie_fabric::memory_read(std::uint64_t address, std::span<std::byte> out) {
  std::uint64_t unclaimed = 0;
  while (!out.empty()) {
    const std::optional<bar_hit> hit = decode(address);
    std::uint64_t n = hit ? claimable_bytes(*hit, out.size()) : 0;
    if (n == 0) {
      ++unclaimed;
      n = 4;
      store32(out, 0, 0xFFFF'FFFF);
    } else {
      read_bar(*hit, out.first(n));
    }
    address += n;
    out = out.subspan(n);
  }
  return unclaimed;
}

bool pcie_fabric::memory_write_dword(std::uint64_t address, std::uint8_t byte_enable, std::uint32_t value) {
  std::array<std::byte, 4> bytes;
  if ((byte_enable & 0xF) == 0xF) {
    store32(bytes, 0, value);
    return memory_write(address, bytes) == 0;
  }
  const std::optional<bar_hit> hit = decode(address);
  if (!hit || claimable_bytes(*hit, 4) == 0) return false;
  store32(bytes, 0, value);
  if (hit->index == 0) {  // VRAM takes single bytes
    for (unsigned i = 0; i < 4; ++i)
      if (byte_enable >> i & 1) gpu_.vram().write({hit->offset + i}, std::span<const std::byte>(bytes).subspan(i, 1));
    return true;
  }
  // Doorbells and registers take whole dwords: merge the enabled lanes into the current value
  // (a read that a register with read side effects would notice; the reference never does it).
  read_bar(*hit, bytes);
  const std::uint32_t mask = lane_mask(byte_enable);
  store32(bytes, 0, (load32(bytes, 0) & ~mask) | (value & mask));
  write_bar(*hit, bytes);
  return true;
}

tlp_completion pcie_fabric::memory_read_dword(std::uint64_t address) {
  if (!link_up_) return {.delivered = false};
  std::array<std::byte, 4> bytes;
  const std::uint64_t unclaimed = memory_read(address, bytes);
  return {.data = load32(bytes, 0), .status = unclaimed ? completion_unsupported : completion_success};
}

}  // namespace tg::emu::usb
