// test_utf8_stream.cpp: the incremental UTF-8 decoder holds back partial characters.
#include <doctest/doctest.h>

#include "llm/tokenizer/utf8_stream.hpp"

using tg::tokenizer::utf8_stream;

namespace {
const std::string replacement = "\xEF\xBF\xBD";
}

TEST_CASE("utf8_stream holds a split four-byte character until its last byte arrives") {
  utf8_stream s;
  CHECK(s.push(" \xF0\x9F\x98") == " ");
  CHECK(s.pending() == "\xF0\x9F\x98");
  CHECK(s.push("\x8A") == "\xF0\x9F\x98\x8A");
  CHECK(s.flush().empty());
}

TEST_CASE("utf8_stream passes complete text through unchanged") {
  utf8_stream s;
  CHECK(s.push("h\xC3\xA9llo \xE4\xBD\xA0") == "h\xC3\xA9llo \xE4\xBD\xA0");
  CHECK(s.pending().empty());
}

TEST_CASE("utf8_stream replaces each maximal invalid subsequence with one U+FFFD") {
  utf8_stream s;
  SUBCASE("a lone continuation byte") { CHECK(s.push("a\x80" "b") == "a" + replacement + "b"); }
  SUBCASE("a lead byte followed by a non-continuation") { CHECK(s.push("\xE2\x82" "A") == replacement + "A"); }
  SUBCASE("a second byte outside the lead's range is its own error") {
    CHECK(s.push("\xF0\x80") == replacement + replacement);
  }
  SUBCASE("bytes that can never start a character") { CHECK(s.push("\xC0\xFF") == replacement + replacement); }
  SUBCASE("a surrogate encoding") { CHECK(s.push("\xED\xA0\x80") == replacement + replacement + replacement); }
}

TEST_CASE("utf8_stream turns an incomplete tail into U+FFFD on flush") {
  utf8_stream s;
  CHECK(s.push("ok\xE4\xBD").size() == 2);
  CHECK(s.flush() == replacement);
  CHECK(s.flush().empty());
}
