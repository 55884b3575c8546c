// bridge_firmware.cpp: the emulated bridge firmware's EP0 requests: standard descriptors and the
// vendor requests of tinygrad/runtime/support/usb.py (see bridge_firmware.hpp). Data phases live in bridge_firmware_data.cpp.
#include "drivers/emu/usb/bridge_firmware.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

namespace tg::emu::usb {

namespace {

constexpr std::uint8_t vendor_out = 0x40, vendor_in = 0xC0, standard_in = 0x80;
constexpr std::uint8_t get_descriptor_request = 6;
constexpr std::uint8_t read_xdata_request = 0xE4, write_xdata_request = 0xE5, tlp_request = 0xF0,
                       sram_request = 0xF2, power_request = 0xF3;
constexpr std::uint16_t ltssm_address = 0xB450;
constexpr std::uint8_t ltssm_l0 = 0x78;       // tinygrad/runtime/support/usb.py: link up
constexpr std::uint8_t ltssm_detect = 0x01;   // powered, not trained: any value but 0x78 (our pick)

pci_function_config function_of(gpu& g, const bridge_config& config) {
  if (config.gpu_function) return *config.gpu_function;
  pci_function_config f;
  f.device_id = g.chip().pci_device_id;  // the card's (personality.cpp)
  f.vram_bytes = g.vram().size_bytes();
  // Before ReBAR a card shows a 256 MiB BAR0, or less on a small emulated card.
  f.bar0_initial_bytes = std::min<std::uint64_t>(256ull << 20, std::bit_floor(f.vram_bytes));
  return f;
}

// A USB string descriptor: bLength, bDescriptorType 3, UTF-16LE (the product is ASCII).
std::vector<std::byte> string_descriptor(const std::string& ascii) {
  const std::size_t chars = std::min<std::size_t>(ascii.size(), 126);  // bLength is one byte
  std::vector<std::byte> d{std::byte(2 + 2 * chars), std::byte{3}};
  for (std::size_t i = 0; i < chars; ++i) d.insert(d.end(), {std::byte(ascii[i]), std::byte{0}});
  return d;
}

}  // namespace

bridge_firmware::bridge_firmware(const bridge_config& config, gpu& g, sram_windows& windows)
    : config_(config),
      windows_(windows),
      fabric_(g, function_of(g, config), config.route_config_by_bus_numbers),
      clock_(config.limits) {}

transfer_result bridge_firmware::control(const setup_packet& s, std::span<std::byte> data, milliseconds timeout) {
  if (wedged_) return time_out(timeout);
  if (s.request_type == standard_in && s.request == get_descriptor_request) return get_descriptor(s, data);
  if ((s.request_type & 0x60) == 0x40) return vendor_request(s, data);
  return stall();
}

transfer_result bridge_firmware::get_descriptor(const setup_packet& s, std::span<std::byte> data) {
  ++stats_.get_descriptor;
  const std::uint8_t type = s.value >> 8, index = s.value & 0xFF;
  std::vector<std::byte> d;
  if (type == 3 && index == 0) {
    d = {std::byte{4}, std::byte{3}, std::byte{0x09}, std::byte{0x04}};  // one language: en-US 0x0409
  } else if (type == 3 && index == 2) {
    d = string_descriptor(config_.product);
  } else if (type == 1) {  // device descriptor (USB 3.2, 512-byte EP0 packets, iProduct 2)
    d = {std::byte{18}, std::byte{1}, std::byte{0x20}, std::byte{0x03}, std::byte{0}, std::byte{0}, std::byte{0},
         std::byte{9}, std::byte(config_.vendor_id & 0xFF), std::byte(config_.vendor_id >> 8),
         std::byte(config_.product_id & 0xFF), std::byte(config_.product_id >> 8), std::byte{1}, std::byte{0},
         std::byte{0}, std::byte{2}, std::byte{0}, std::byte{1}};
  } else {
    return stall();
  }
  const std::size_t n = std::min(d.size(), data.size());
  std::memcpy(data.data(), d.data(), n);
  return ok(n);
}

transfer_result bridge_firmware::vendor_request(const setup_packet& s, std::span<std::byte> data) {
  switch (s.request) {
    case read_xdata_request:
      if (s.request_type != vendor_in) break;
      return read_xdata(s.value, data);
    case write_xdata_request:
      if (s.request_type != vendor_out) break;
      return write_xdata(s.value, s.index & 0xFF);
    case tlp_request:
      if (s.request_type == vendor_out) return issue_tlp(s, data);
      if (s.request_type == vendor_in) return fetch_completion(data);
      break;
    case sram_request:
      if (s.request_type != vendor_out) break;
      return arm_sram(s.value, s.index);
    case power_request:
      if (s.request_type != vendor_out) break;
      return power_pcie(s.value);
    default: break;
  }
  return stall();
}

std::uint8_t bridge_firmware::ltssm() const {
  if (fabric_.link_up()) return ltssm_l0;
  return pcie_powered_ ? ltssm_detect : 0;
}

transfer_result bridge_firmware::read_xdata(std::uint16_t address, std::span<std::byte> data) {
  if (address + data.size() > 0x10000) return stall();
  ++stats_.xdata_reads;
  stats_.xdata_read_bytes += data.size();
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto a = std::uint16_t(address + i);
    if (a == ltssm_address)
      data[i] = std::byte(ltssm());
    else if (!windows_.read_xdata(a, data[i]))
      data[i] = std::byte(xram_[a]);
  }
  return ok(data.size());
}

transfer_result bridge_firmware::write_xdata(std::uint16_t address, std::uint8_t value) {
  ++stats_.xdata_writes;
  ++stats_.xdata_write_bytes;
  // The LTSSM byte is the link's state, not memory: writes to it are ignored.
  if (address != ltssm_address && !windows_.write_xdata(address, std::byte(value))) xram_[address] = value;
  return ok(0);
}

transfer_result bridge_firmware::power_pcie(std::uint16_t value) {
  if (value > 1) return stall();
  ++stats_.power_requests;
  pcie_powered_ = value == 1;
  fabric_.set_link_up(pcie_powered_ && config_.link_trains);
  if (pcie_powered_) clock_.spend(clock_.fixed(config_.limits.link_training));
  return ok(0);
}

// 0xF0 OUT: 12 bytes (address low, address high, value), mode in wIndex (tinygrad/runtime/support/usb.py).
transfer_result bridge_firmware::issue_tlp(const setup_packet& s, std::span<std::byte> data) {
  if (data.size() != 12) return stall();
  std::uint32_t words[3];
  std::memcpy(words, data.data(), 12);
  const std::uint64_t address = std::uint64_t(words[1]) << 32 | words[0];
  const std::uint8_t fmt_type = s.value & 0xFF, byte_enable = s.value >> 8;
  const std::uint32_t value = words[2];
  const bool memory_write = (fmt_type & 0xDF) == 0x40, memory_read = (fmt_type & 0xDF) == 0x00;
  switch (s.index) {
    case 0:
      ++stats_.single_tlps;
      single_tlp(fmt_type, byte_enable, address, value);
      return ok(12);
    case 1:
    case 2: {
      const bool write = s.index == 1;
      if (value == 0 || address % 4 != 0 || !(write ? memory_write : memory_read)) return stall();
      const std::uint64_t bytes = std::uint64_t(value) * 4;
      stream_ = stream_arm{write, address, bytes};
      if (write) {
        ++stats_.stream_write_arms;
        stats_.largest_stream_write = std::max(stats_.largest_stream_write, bytes);
      } else {
        ++stats_.stream_read_arms;
        stats_.largest_stream_read = std::max(stats_.largest_stream_read, bytes);
      }
      return ok(12);
    }
    default: return stall();
  }
}

void bridge_firmware::single_tlp(std::uint8_t fmt_type, std::uint8_t byte_enable, std::uint64_t address,
                                 std::uint32_t value) {
  const config_target target{.type1 = (fmt_type & 1) != 0,
                             .bus = std::uint8_t(address >> 24),
                             .device = std::uint8_t(address >> 19 & 0x1F),
                             .function = std::uint8_t(address >> 16 & 0x7),
                             .reg = std::uint16_t(address & 0xFFC)};
  switch (fmt_type) {
    case 0x04: case 0x05: return complete(fabric_.config_read(target));
    case 0x44: case 0x45: return complete(fabric_.config_write(target, byte_enable, value));
    case 0x00: case 0x20: return complete(fabric_.memory_read_dword(address & ~3ull));
    case 0x40: case 0x60:  // posted: no completion
      if (!fabric_.memory_write_dword(address & ~3ull, byte_enable, value)) ++stats_.dropped_writes;
      return;
    default:
      if ((fmt_type & 0xB8) == 0x30) return;  // a message: posted, nothing to route here
      return complete({.data = 0, .status = completion_unsupported});
  }
}

void bridge_firmware::complete(const tlp_completion& c) {
  if (c.delivered && c.status == completion_unsupported) ++stats_.unsupported_requests;
  completion_ = {};
  std::memcpy(completion_.data(), &c.data, 4);
  completion_[4] = std::byte(c.status << 5);
  completion_[7] = std::byte(c.delivered ? 0 : 1);  // no completion came back: the host retries
}

transfer_result bridge_firmware::fetch_completion(std::span<std::byte> data) {
  ++stats_.completions;
  const std::size_t n = std::min(data.size(), completion_.size());
  std::memcpy(data.data(), completion_.data(), n);
  return ok(n);
}

// 0xF2: wValue = sectors (14:0) | read (15); wIndex = start slot (7:0) | slot count (15:8).
transfer_result bridge_firmware::arm_sram(std::uint16_t value, std::uint16_t index) {
  const bool read = value & 0x8000;
  const std::uint64_t bytes = std::uint64_t(value & 0x7FFF) * 512;
  const std::uint64_t offset = (index & 0xFF) * sram_slot_bytes, slots = index >> 8;
  if (bytes == 0 || bytes > slots * sram_slot_bytes || offset + bytes > sram_bytes) return stall();
  sram_ = sram_arm{read, offset, bytes, windows_.releases()};
  ++(read ? stats_.sram_read_arms : stats_.sram_write_arms);
  return ok(0);
}

}  // namespace tg::emu::usb
