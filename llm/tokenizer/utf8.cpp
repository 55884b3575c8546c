// utf8.cpp: UTF-8 encode/decode helpers.
#include "llm/tokenizer/utf8.hpp"

namespace tg::tokenizer::utf8 {

void append(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += char(c);
  } else if (c < 0x800) {
    out += char(0xC0 | (c >> 6));
    out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += char(0xE0 | (c >> 12));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else {
    out += char(0xF0 | (c >> 18));
    out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  }
}

std::int32_t decode(std::string_view text, std::size_t& pos) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  const std::size_t n = sequence_length(lead);
  if (n == 1) {
    ++pos;
    return lead < 0x80 ? lead : -1;
  }
  if (pos + n > text.size()) {
    ++pos;
    return -1;
  }
  std::int32_t c = lead & (0x7F >> n);
  for (std::size_t i = 1; i < n; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) {
      ++pos;
      return -1;
    }
    c = (c << 6) | (byte(pos + i) & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not characters.
  constexpr std::int32_t smallest[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < smallest[n] || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) {
    ++pos;
    return -1;
  }
  pos += n;
  return c;
}

std::string_view trim_white_space(std::string_view text) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t next = begin;
    if (!is_white_space(decode(text, next))) break;
    begin = next;
  }
  std::size_t end = begin;
  for (std::size_t pos = begin; pos < text.size();) {
    if (!is_white_space(decode(text, pos))) end = pos;
  }
  return text.substr(begin, end - begin);
}

}  // namespace tg::tokenizer::utf8
