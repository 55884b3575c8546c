// byte_level.hpp: GPT-2's byte-to-character mapping, used by byte-level BPE vocabularies.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tg::tokenizer::byte_level {

// Bytes 33-126, 161-172 and 174-255 stand for themselves; the other 68 bytes, in increasing
// order, become U+0100 onwards, so every byte is a printable character (GPT-2's bytes_to_unicode).
constexpr std::array<char32_t, 256> make_byte_to_code_point() {
  std::array<char32_t, 256> table{};
  char32_t next = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    table[b] = printable ? char32_t(b) : next++;
  }
  return table;
}
inline constexpr std::array<char32_t, 256> byte_to_code_point = make_byte_to_code_point();
static_assert(byte_to_code_point[' '] == 0x120 && byte_to_code_point['\n'] == 0x10A);
static_assert(byte_to_code_point[127] == 0x121 && byte_to_code_point[173] == 0x143);

// The byte a character stands for, or -1 if the character is not in the mapping.
constexpr int code_point_to_byte(char32_t c) {
  if (c < 0x100) return byte_to_code_point[c] == c ? int(c) : -1;
  if (c > 0x143) return -1;
  for (int b = 0; b < 256; ++b)
    if (byte_to_code_point[b] == c) return b;
  return -1;
}

// Raw bytes -> the vocabulary's spelling ("a b" -> "aĠb").
std::string encode(std::string_view bytes);

// The vocabulary's spelling -> raw bytes. Characters outside the mapping (which only
// non-normal tokens contain) are kept as their UTF-8.
std::string decode(std::string_view text);

}  // namespace tg::tokenizer::byte_level
