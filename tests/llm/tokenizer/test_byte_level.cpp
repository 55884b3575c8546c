// test_byte_level.cpp: GPT-2's byte-to-character mapping.
#include <doctest/doctest.h>

#include <set>

#include "llm/tokenizer/byte_level.hpp"

namespace bl = tg::tokenizer::byte_level;

TEST_CASE("byte-level mapping spells space, newline and DEL as GPT-2's bytes_to_unicode does") {
  CHECK(bl::encode(" ") == "\xC4\xA0");       // U+0120
  CHECK(bl::encode("\n") == "\xC4\x8A");      // U+010A
  CHECK(bl::encode("\x7F") == "\xC4\xA1");    // U+0121
  CHECK(bl::encode("\xAD") == "\xC5\x83");    // U+0143
  CHECK(bl::encode("Hello") == "Hello");
}

TEST_CASE("byte-level mapping is a bijection on all 256 bytes") {
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    seen.insert(bl::byte_to_code_point[b]);
    CHECK(bl::code_point_to_byte(bl::byte_to_code_point[b]) == b);
  }
  CHECK(seen.size() == 256);
}

TEST_CASE("byte-level decode inverts encode for every byte string") {
  std::string all;
  for (int b = 0; b < 256; ++b) all += char(b);
  CHECK(bl::decode(bl::encode(all)) == all);
}

TEST_CASE("byte-level decode keeps characters outside the mapping as UTF-8") {
  CHECK(bl::decode("<|im_end|>") == "<|im_end|>");
  CHECK(bl::decode("\xE4\xBD\xA0") == "\xE4\xBD\xA0");  // U+4F60 is not a mapped character
}
