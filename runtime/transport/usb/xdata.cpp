// xdata.cpp: XDATA reads (0xE4) and byte writes (0xE5), as tinygrad/runtime/support/usb.py:
// CustomASM24Controller.read / write.
//
//   read_xdata(dev, 0xB450, one_byte);
//
// Not thread-safe.
#include "runtime/transport/usb/xdata.hpp"

#include <algorithm>

#include "runtime/transport/usb/bridge_requests.hpp"
#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::transport::usb {
namespace {

void check_range(const usb_device& dev, const char* what, std::uint32_t address, std::size_t bytes) {
  if (std::uint64_t(address) + bytes > 0x10000)
    throw usage_error(str(dev.name(), ": XDATA ", what, " of ", bytes, " bytes at ", upper_hex(address, 4),
                          " leaves the 64 KiB XDATA space"));
}

}  // namespace

void read_xdata(usb_device& dev, std::uint32_t address, std::span<std::byte> out) {
  check_range(dev, "read", address, out.size());
  for (std::size_t done = 0; done < out.size();) {
    std::size_t n = std::min(xdata_read_max, out.size() - done);
    dev.control_in(bridge_request::read_xdata, std::uint16_t(address + done), 0, out.subspan(done, n), xdata_timeout);
    done += n;
  }
}

void write_xdata(usb_device& dev, std::uint32_t address, std::span<const std::byte> in) {
  check_range(dev, "write", address, in.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    dev.control_out(bridge_request::write_xdata, std::uint16_t(address + i), std::uint16_t(in[i]), {},
                    xdata_timeout);
}

std::uint8_t read_xdata_byte(usb_device& dev, std::uint32_t address) {
  std::byte b{};
  read_xdata(dev, address, std::span(&b, 1));
  return std::uint8_t(b);
}

}  // namespace tg::transport::usb
