// tlp.cpp: mode-0 TLPs over 0xF0, completion decoding and the retry loop (tinygrad/runtime/support/
// usb.py: CustomASM24Controller.pcie_request).
//
//   issue_tlp(dev, tlp_fmt::config_read1, config_address(4, 0, 0, 0), 0, 4);
//
// Not thread-safe.
#include "runtime/transport/usb/tlp.hpp"

#include <thread>

#include "runtime/transport/usb/bridge_requests.hpp"
#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::transport::usb {
namespace {

const char* tlp_name(std::uint8_t fmt) {
  switch (fmt) {
    case tlp_fmt::config_read0: return "config read type 0";
    case tlp_fmt::config_read1: return "config read type 1";
    case tlp_fmt::config_write0: return "config write type 0";
    case tlp_fmt::config_write1: return "config write type 1";
    case tlp_fmt::memory_read64: return "memory read";
    case tlp_fmt::memory_write64: return "memory write";
    default: return "TLP";
  }
}

std::string tlp_what(const usb_device& dev, std::uint8_t fmt, std::uint64_t address, unsigned size) {
  return str(dev.name(), ": PCIe ", tlp_name(fmt), " (fmt ", upper_hex(fmt, 2), ") of ", size, " bytes at ",
             upper_hex(address, 8));
}

void put_le32(std::byte* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = std::byte(v >> (8 * i));
}

}  // namespace

std::array<std::byte, 12> tlp_payload(std::uint64_t address, std::uint32_t value) {
  std::array<std::byte, 12> out{};
  put_le32(out.data(), std::uint32_t(address));
  put_le32(out.data() + 4, std::uint32_t(address >> 32));
  put_le32(out.data() + 8, value);
  return out;
}

tlp_completion decode_completion(std::span<const std::byte, 8> reply) {
  tlp_completion c;
  for (int i = 0; i < 4; ++i) c.data |= std::uint32_t(reply[i]) << (8 * i);
  c.status = unsigned(reply[4]) >> 5;
  c.return_status = std::uint8_t(reply[7]);
  return c;
}

const char* completion_status_name(unsigned status) {
  switch (status) {
    case 0: return "Successful Completion";
    case 1: return "Unsupported Request";
    case 2: return "Configuration Request Retry Status";
    case 4: return "Completer Abort";
    default: return "reserved";
  }
}

std::uint32_t issue_tlp(usb_device& dev, std::uint8_t fmt, std::uint64_t address, std::uint32_t value, unsigned size,
                        const tlp_retry_policy& retry) {
  if ((size != 1 && size != 2 && size != 4) || (address & 3) + size > 4)
    throw usage_error(str(tlp_what(dev, fmt, address, size), ": a single TLP moves 1, 2 or 4 bytes within one dword"));
  unsigned shift = 8 * unsigned(address & 3);
  std::uint32_t mask = size == 4 ? 0xFFFFFFFFu : (1u << (8 * size)) - 1;
  auto w_value = std::uint16_t(fmt | tlp_byte_enable(size, address) << 8);
  std::array<std::byte, 12> payload = tlp_payload(address & ~std::uint64_t(3), (value & mask) << shift);
  tlp_completion c;
  for (unsigned attempt = 0;; ++attempt) {
    dev.control_out(bridge_request::tlp, w_value, std::uint16_t(tlp_mode::single), payload, tlp_timeout);
    if (!tlp_expects_completion(fmt)) return 0;
    std::array<std::byte, 8> reply{};
    dev.control_in(bridge_request::tlp, 0, 0, reply, tlp_timeout);
    c = decode_completion(reply);
    if (c.return_status == 0) break;
    if (attempt == retry.retries)
      throw device_error(str(tlp_what(dev, fmt, address, size), ": TLP error after retries (return status ",
                             upper_hex(c.return_status, 2), " on each of ", attempt + 1, " attempts)"));
    std::this_thread::sleep_for(retry.pause);
  }
  if (c.status != 0)
    throw device_error(str(tlp_what(dev, fmt, address, size), " completed with status ", c.status, " (",
                           completion_status_name(c.status), ")"));
  return (c.data >> shift) & mask;
}

std::uint32_t config_read(usb_device& dev, unsigned bus, unsigned reg, unsigned size, const tlp_retry_policy& retry) {
  std::uint8_t fmt = bus == 0 ? tlp_fmt::config_read0 : tlp_fmt::config_read1;
  return issue_tlp(dev, fmt, config_address(bus, 0, 0, reg), 0, size, retry);
}

void config_write(usb_device& dev, unsigned bus, unsigned reg, std::uint32_t value, unsigned size,
                  const tlp_retry_policy& retry) {
  std::uint8_t fmt = bus == 0 ? tlp_fmt::config_write0 : tlp_fmt::config_write1;
  issue_tlp(dev, fmt, config_address(bus, 0, 0, reg), value, size, retry);
}

}  // namespace tg::transport::usb
