// quote.hpp: quotes names read from a file for error messages, escaping what would garble a
// terminal (a corrupt file's "key" can be any bytes) and shortening what would flood it.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include <tg/core/hex.hpp>

namespace tg::gguf {

inline std::string quote(std::string_view text) {
  constexpr std::size_t max_shown = 96;
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < max_shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex_digit(c >> 4);
      out += hex_digit(c);
    }
  }
  if (text.size() > max_shown) out += "...";
  out += "'";
  return out;
}

}  // namespace tg::gguf
