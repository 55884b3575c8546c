// utf8_stream.cpp: the incremental decoder's state machine.
#include "llm/tokenizer/utf8_stream.hpp"

#include "llm/tokenizer/utf8.hpp"

namespace tg::tokenizer {

namespace {

// The valid range of the byte after a lead byte (Unicode Table 3-7): narrower than
// 80..BF after E0, ED, F0 and F4, which rules out overlongs, surrogates and > U+10FFFF.
struct second_byte_range {
  unsigned char low, high;
};

second_byte_range second_range(unsigned char lead) {
  switch (lead) {
    case 0xE0: return {0xA0, 0xBF};
    case 0xED: return {0x80, 0x9F};
    case 0xF0: return {0x90, 0xBF};
    case 0xF4: return {0x80, 0x8F};
    default: return {0x80, 0xBF};
  }
}

// Expected sequence length for a lead byte, or 0 if the byte cannot start one.
std::size_t expected_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

}  // namespace

std::string utf8_stream::push(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (!pending_.empty()) {
      const auto lead = static_cast<unsigned char>(pending_[0]);
      const second_byte_range range = pending_.size() == 1 ? second_range(lead) : second_byte_range{0x80, 0xBF};
      if (b >= range.low && b <= range.high) {
        pending_ += c;
        if (pending_.size() == expected_length(lead)) {
          out += pending_;
          pending_.clear();
        }
        continue;
      }
      // The held bytes can no longer complete: they are one invalid subsequence, and this
      // byte starts afresh.
      out += utf8::replacement_character;
      pending_.clear();
    }
    switch (expected_length(b)) {
      case 0: out += utf8::replacement_character; break;
      case 1: out += c; break;
      default: pending_ += c; break;
    }
  }
  return out;
}

std::string utf8_stream::flush() {
  if (pending_.empty()) return {};
  pending_.clear();
  return std::string(utf8::replacement_character);
}

}  // namespace tg::tokenizer
