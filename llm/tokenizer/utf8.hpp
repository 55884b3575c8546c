// utf8.hpp: the few UTF-8 helpers the tokenizers need (sequence length, encode, decode).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tg::tokenizer::utf8 {

// Length of the sequence a lead byte claims to start: 1 to 4. Continuation and invalid lead
// bytes count as 1 so that scanning always advances. Use decode() to check validity.
constexpr std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// Appends the UTF-8 encoding of a code point (at most U+10FFFF).
void append(std::string& out, char32_t code_point);

// Decodes the code point at text[pos], advancing pos past it. Returns -1 (and advances by
// one byte) for a byte that does not start a valid sequence.
std::int32_t decode(std::string_view text, std::size_t& pos);

// U+FFFD, what a decoder emits for bytes that are not valid UTF-8.
inline constexpr std::string_view replacement_character = "\xEF\xBF\xBD";

// Whether a code point is Unicode White_Space (PropList.txt), which is what Jinja's
// trim/strip and the pre-tokenizers' \s mean.
constexpr bool is_white_space(std::int32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// Removes leading and trailing White_Space characters, like Python's str.strip().
std::string_view trim_white_space(std::string_view text);

}  // namespace tg::tokenizer::utf8
