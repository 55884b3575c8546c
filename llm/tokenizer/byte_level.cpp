// byte_level.cpp: encode and decode GPT-2's byte-level spelling.
#include "llm/tokenizer/byte_level.hpp"

#include "llm/tokenizer/utf8.hpp"

namespace tg::tokenizer::byte_level {

namespace {
// The inverse mapping for U+0000..U+0143, the only characters the mapping produces.
constexpr std::array<std::int16_t, 0x144> make_code_point_to_byte() {
  std::array<std::int16_t, 0x144> table{};
  for (auto& entry : table) entry = -1;
  for (int b = 0; b < 256; ++b) table[byte_to_code_point[b]] = std::int16_t(b);
  return table;
}
constexpr auto inverse = make_code_point_to_byte();
}  // namespace

std::string encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) utf8::append(out, byte_to_code_point[b]);
  return out;
}

std::string decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t start = pos;
    const std::int32_t c = utf8::decode(text, pos);
    if (c >= 0 && c < std::int32_t(inverse.size()) && inverse[c] >= 0)
      out += char(inverse[c]);
    else
      out.append(text.substr(start, pos - start));
  }
  return out;
}

}  // namespace tg::tokenizer::byte_level
