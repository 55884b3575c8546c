// hex.hpp: "0x0F05"-style numbers for the USB transport's messages.
//
//   tg::str("wValue=", hex(0xF05, 4))  // "wValue=0x0F05"
//
// Pure function; thread-safe.
#pragma once
#include <cstdint>
#include <string>

namespace tg::transport::usb {

inline std::string hex(std::uint64_t value, int min_digits = 1) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  do {
    out.insert(out.begin(), digits[value & 0xF]);
    value >>= 4;
  } while (value != 0 || int(out.size()) < min_digits);
  return "0x" + out;
}

}  // namespace tg::transport::usb
