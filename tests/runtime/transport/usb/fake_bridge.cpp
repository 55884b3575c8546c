// fake_bridge.cpp: the scripted bridge's model (see fake_bridge.hpp), from tinygrad's usb.py and system.py.
//
//   fake_bridge b; b.tlp_return_failures = 3;
//
// Not thread-safe.
#include "tests/runtime/transport/usb/fake_bridge.hpp"

#include <algorithm>
#include <bit>
#include <utility>

namespace tg::transport::usb::testing {
namespace {

std::uint32_t le32(std::span<const std::byte> p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

class done_async final : public async_transfer {
 public:
  explicit done_async(transfer_result r) : r_(r) {}
  bool done() override { return true; }
  transfer_result wait() override { return r_; }

 private:
  transfer_result r_;
};

constexpr unsigned gpu = 4;
constexpr unsigned rebar = 0x150;  // behind a first capability at 0x100, so the walk is exercised

}  // namespace

fake_bridge::fake_bridge() {
  xdata[0xB450] = 0x78;
  for (unsigned bus = 0; bus <= gpu; ++bus) config[bus] = {};
  set_config32(gpu, 0x00, 0x744C1002);                  // vendor 0x1002, device 0x744C
  set_config32(gpu, 0x100, 0x0001 | 1u << 16 | 0x150u << 20);  // AER (id 1), next 0x150
  set_config32(gpu, rebar, 0x0015 | 1u << 16);          // ReBAR, last capability
  set_config32(gpu, rebar + 4, 0x7FFF0);                // 1 MiB .. 16 GiB
  set_config32(gpu, rebar + 8, 0x20 | 8u << 8);         // one BAR (index 0), now 256 MiB
  bars[0] = {256u << 20, 0xC, 0};                       // VRAM: 64-bit prefetchable (ReBAR sized)
  bars[2] = {2u << 20, 0xC, 0};                         // doorbells: 64-bit prefetchable
  bars[4] = {0x100, 0x1, 0};                            // I/O
  bars[5] = {1u << 20, 0x0, 0};                         // MMIO: 32-bit
}

std::uint32_t fake_bridge::config32(unsigned bus, unsigned reg) const {
  const auto& c = config.at(bus);
  return c[reg] | c[reg + 1] << 8 | c[reg + 2] << 16 | std::uint32_t(c[reg + 3]) << 24;
}

void fake_bridge::set_config32(unsigned bus, unsigned reg, std::uint32_t v) {
  for (unsigned i = 0; i < 4; ++i) config[bus][reg + i] = std::uint8_t(v >> (8 * i));
}

std::uint32_t fake_bridge::gpu_config_read(unsigned reg) const {
  unsigned slot = (reg - 0x10) / 4;
  if (bars[slot].size != 0) return std::uint32_t(bars[slot].value & 0xFFFFFFF0u) | bars[slot].type;
  if (slot > 0 && (bars[slot - 1].type & 4) && bars[slot - 1].size != 0)
    return std::uint32_t(bars[slot - 1].value >> 32);
  return 0;
}

void fake_bridge::gpu_bar_write(unsigned reg, std::uint32_t value) {
  unsigned slot = (reg - 0x10) / 4;
  // A ReBAR control write resizes BAR0 (size = 1 MiB << field, PCIe base spec 7.8.6).
  bars[0].size = 1ull << (20 + (config32(gpu, rebar + 8) >> 8 & 0x1F));
  if (bars[slot].size != 0) {
    fake_bar& b = bars[slot];
    b.value = ((b.value & ~0xFFFFFFFFull) | (value & ~0xFu)) & ~(b.size - 1) & ((b.type & 4) ? ~0ull : 0xFFFFFFFFull);
  } else if (slot > 0 && (bars[slot - 1].type & 4) && bars[slot - 1].size != 0) {
    fake_bar& b = bars[slot - 1];
    b.value = ((b.value & 0xFFFFFFFFull) | std::uint64_t(value) << 32) & ~(b.size - 1);
  }
}

void fake_bridge::config_tlp(std::uint8_t fmt, unsigned be, std::uint64_t address, std::uint32_t value) {
  unsigned bus = unsigned(address >> 24), reg = unsigned(address & 0xFFF);
  bool is_write = fmt & 0x40;
  bool type_ok = (fmt & 0x1F) == (bus == 0 ? 0x04 : 0x05);
  completion_ = {};
  if (!config.count(bus) || !type_ok || (address >> 16 & 0xFF) != 0) {
    completion_[4] = std::byte(1 << 5);  // Unsupported Request
    return;
  }
  if (is_write) {
    unsigned lo = unsigned(std::countr_zero(be)), n = unsigned(std::popcount(be));
    std::uint32_t logical = value >> (8 * lo);
    if (n < 4) logical &= (1u << (8 * n)) - 1;
    config_writes.push_back({bus, reg + lo, n, logical});
    if (bus == gpu && reg >= 0x10 && reg < 0x28) {
      gpu_bar_write(reg, value);
    } else {
      for (unsigned i = 0; i < 4; ++i)
        if (be >> i & 1) config[bus][reg + i] = std::uint8_t(value >> (8 * i));
      if (bus == gpu && reg == rebar + 8) gpu_bar_write(0x10, std::uint32_t(bars[0].value));
    }
    return;
  }
  std::uint32_t data = bus == gpu && reg >= 0x10 && reg < 0x28 ? gpu_config_read(reg) : config32(bus, reg);
  for (int i = 0; i < 4; ++i) completion_[i] = std::byte(data >> (8 * i));
}

transfer_result fake_bridge::tlp_out(std::uint16_t value, std::uint16_t index, std::span<const std::byte> data) {
  if (data.size() != 12) return {usb_status::stall, 0};
  auto fmt = std::uint8_t(value & 0xFF);
  unsigned be = value >> 8;
  std::uint64_t address = le32(data) | std::uint64_t(le32(data.subspan(4))) << 32;
  std::uint32_t v = le32(data.subspan(8));
  if (index == 0) {
    config_tlp(fmt, be, address, v);
    completion_[4] |= std::byte(completion_status << 5);
    if (tlp_return_failures > 0) {
      --tlp_return_failures;
      completion_[7] = std::byte(1);
    }
    return {usb_status::ok, 12};
  }
  bool write = index == 1 && fmt == 0x60, read = index == 2 && fmt == 0x20;
  if ((!write && !read) || be != 0x0F) return {usb_status::stall, 0};
  armed_ = write ? armed_t::stream_write : armed_t::stream_read;
  armed_address_ = address;
  armed_bytes_ = std::uint64_t(v) * 4;
  return {usb_status::ok, 12};
}

transfer_result fake_bridge::get_descriptor(std::uint16_t value, std::span<std::byte> data) {
  if (descriptor_timeouts != 0) {
    if (descriptor_timeouts > 0) --descriptor_timeouts;
    return {usb_status::timeout, 0};
  }
  if (value != 0x0302) return {usb_status::stall, 0};  // the backend lists iProduct 2
  std::vector<std::byte> d{std::byte(2 + 2 * product.size()), std::byte(3)};
  for (char c : product) d.insert(d.end(), {std::byte(c), std::byte(0)});
  std::size_t n = std::min(d.size(), data.size());
  std::copy_n(d.begin(), n, data.begin());
  return {usb_status::ok, n};
}

transfer_result fake_bridge::control(std::uint8_t rt, std::uint8_t req, std::uint16_t value, std::uint16_t index,
                                     std::span<std::byte> data, std::chrono::milliseconds timeout) {
  usb_record r{usb_record::control, rt, req, value, index, 0, data.size(), {}, timeout};
  if (!(rt & 0x80)) r.out.assign(data.begin(), data.end());
  log.push_back(r);
  if (rt == 0x80 && req == 6 && index == 0x0409) return get_descriptor(value, data);
  if (rt == 0x40 && req == 0xF0) return tlp_out(value, index, data);
  if (rt == 0xC0 && req == 0xF0 && data.size() == 8) {
    std::copy(completion_.begin(), completion_.end(), data.begin());
    return {usb_status::ok, 8};
  }
  if (rt == 0xC0 && req == 0xE4 && data.size() <= 255 && value + data.size() <= 0x10000) {
    for (std::size_t i = 0; i < data.size(); ++i) {
      unsigned a = unsigned(value + i);  // XDATA 0xF000.. is the SRAM's first 4 KiB (test/mockgpu/usb.py)
      data[i] = a >= 0xF000 ? sram[a - 0xF000] : std::byte(xdata[a]);
    }
    return {usb_status::ok, data.size()};
  }
  if (rt == 0x40 && req == 0xE5 && data.empty()) {
    if (value >= 0xF000) sram[value - 0xF000] = std::byte(index);
    else xdata[value] = std::uint8_t(index);
    return {usb_status::ok, 0};
  }
  if (rt == 0x40 && req == 0xF2 && data.empty()) {
    armed_ = (value & 0x8000) ? armed_t::sram_read : armed_t::sram_write;
    armed_address_ = std::uint64_t(index & 0xFF) * 16384;
    armed_bytes_ = std::uint64_t(value & 0x7FFF) * 512;
    return {usb_status::ok, 0};
  }
  if (rt == 0x40 && req == 0xF3 && data.empty()) {
    xdata[0xB450] = value == 1 ? ltssm_after_power : 0;
    return {usb_status::ok, 0};
  }
  return {usb_status::stall, 0};
}

transfer_result fake_bridge::bulk(std::uint8_t endpoint, std::span<std::byte> data, std::chrono::milliseconds timeout) {
  usb_record r{usb_record::bulk, 0, 0, 0, 0, endpoint, data.size(), {}, timeout};
  if (!(endpoint & 0x80)) r.out.assign(data.begin(), data.end());
  log.push_back(r);
  armed_t armed = std::exchange(armed_, armed_t::none);
  if (data.size() != armed_bytes_) return {usb_status::stall, 0};  // the firmware expects exactly the armed size
  if (endpoint == 0x02) {
    if (bulk_out_status != usb_status::ok) return {bulk_out_status, 0};
    if (armed == armed_t::stream_write)
      for (std::size_t i = 0; i < data.size(); ++i) memory[armed_address_ + i] = data[i];
    else if (armed == armed_t::sram_write)
      std::copy(data.begin(), data.end(), sram.begin() + std::ptrdiff_t(armed_address_));
    else
      return {usb_status::stall, 0};
    return {usb_status::ok, data.size()};
  }
  if (endpoint == 0x81 && armed == armed_t::stream_read) {
    for (std::size_t i = 0; i < data.size(); ++i) {
      auto it = memory.find(armed_address_ + i);
      data[i] = it == memory.end() ? std::byte(0) : it->second;
    }
    return {usb_status::ok, data.size()};
  }
  if (endpoint == 0x81 && armed == armed_t::sram_read) {
    std::copy_n(sram.begin() + std::ptrdiff_t(armed_address_), data.size(), data.begin());
    return {usb_status::ok, data.size()};
  }
  return {usb_status::stall, 0};
}

std::unique_ptr<async_transfer> fake_handle::submit_control(std::uint8_t rt, std::uint8_t req, std::uint16_t value,
                                                            std::uint16_t index, std::span<std::byte> data,
                                                            std::chrono::milliseconds timeout) {
  return std::make_unique<done_async>(control(rt, req, value, index, data, timeout));
}

std::unique_ptr<async_transfer> fake_handle::submit_bulk(std::uint8_t endpoint, std::span<std::byte> data,
                                                         std::chrono::milliseconds timeout) {
  return std::make_unique<done_async>(bulk(endpoint, data, timeout));
}

usb_status fake_handle::reset_device() {
  b_->setup.push_back("reset");
  ++b_->resets;
  return usb_status::ok;
}

}  // namespace tg::transport::usb::testing
