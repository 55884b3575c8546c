// stop_strings_test.cpp: stop sequences over streamed text: held back while they may match,
// released when they cannot, never split inside a UTF-8 character.
#include <doctest/doctest.h>

#include "llm/serve/stop_strings.hpp"

using tg::serve::stop_strings;

TEST_CASE("text that cannot start a stop sequence goes out at once") {
  stop_strings s({"END"});
  CHECK(s.push("hello ") == "hello ");
  CHECK(s.push("world") == "world");
  CHECK(s.flush() == "");
  CHECK_FALSE(s.stopped());
}

TEST_CASE("a possible start of a stop sequence is held until it cannot match") {
  stop_strings s({"\n\n"});
  CHECK(s.push("Hello\n") == "Hello");
  CHECK(s.push("x") == "\nx");
  CHECK(s.push("\n") == "");
  CHECK(s.push("\n") == "");
  CHECK(s.stopped());
  CHECK(s.push("more") == "");
  CHECK(s.flush() == "");
}

TEST_CASE("a stop sequence split over many pushes is found, and the text before it kept") {
  stop_strings s({"STOP"});
  std::string out;
  for (std::string piece : {"abc S", "T", "O", "P tail"}) out += s.push(piece);
  CHECK(out == "abc ");
  CHECK(s.stopped());
}

TEST_CASE("the earliest of several stop sequences wins") {
  stop_strings s({"world", "lo w"});
  CHECK(s.push("hello world") == "hel");
  CHECK(s.stopped());
}

TEST_CASE("held text comes out at the end when no stop sequence completed") {
  stop_strings s({"abc"});
  CHECK(s.push("xxab") == "xx");
  CHECK(s.flush() == "ab");
}

TEST_CASE("a stop sequence of multibyte characters never splits a character") {
  // "é" is C3 A9; the held suffix starts at a character's first byte.
  stop_strings s({"\xC3\xA9t\xC3\xA9"});
  CHECK(s.push("caf\xC3\xA9") == "caf");
  CHECK(s.push("!") == "\xC3\xA9!");
  CHECK(s.push("\xC3\xA9t") == "");
  CHECK(s.push("\xC3\xA9") == "");
  CHECK(s.stopped());
}
