// hex.hpp: tg::hex, the one "0x..." formatter for numbers in messages and dumps.
//
//   tg::str("at ", tg::hex{offset})        // "at 0x1f00"
//   out << tg::hex{word, 8}                // "0x00000ab5": zero-padded to 8 digits
//   tg::str("wValue=", tg::upper_hex(v, 4))  // "wValue=0x0F05"
#pragma once
#include <cstdint>
#include <ios>
#include <ostream>

namespace tg {

struct hex {
  std::uint64_t value = 0;
  int digits = 1;      // zero-padded to at least this many digits
  bool upper = false;  // A-F instead of a-f; the prefix stays "0x"
};

// One lower-case digit of v (0..15): for byte escapes such as \x1f, which are not numbers with a prefix.
constexpr char hex_digit(unsigned v) { return "0123456789abcdef"[v & 15]; }

// The digits in capitals, as the ASM2464 bridge's documents spell its requests ("0xF0").
constexpr hex upper_hex(std::uint64_t value, int digits = 1) { return {value, digits, true}; }

// Leaves the stream's flags and fill as it found them, so the numbers after it print as before.
inline std::ostream& operator<<(std::ostream& out, hex h) {
  const std::ios_base::fmtflags flags = out.flags();
  const char fill = out.fill();
  out << "0x";
  out.flags(std::ios_base::hex | (h.upper ? std::ios_base::uppercase : std::ios_base::fmtflags{}));
  out.fill('0');
  out.width(h.digits);
  out << h.value;
  out.flags(flags);
  out.fill(fill);
  return out;
}

}  // namespace tg
