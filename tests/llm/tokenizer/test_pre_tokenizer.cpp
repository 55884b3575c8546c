// test_pre_tokenizer.cpp: the preset regexes split text into the expected words.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <tg/core/error.hpp>
#include "llm/tokenizer/pre_tokenizer.hpp"

using tg::tokenizer::pre_tokenizer;
using tg::tokenizer::pre_tokenizer_kind;
using words = std::vector<std::string>;

namespace {
words split(pre_tokenizer_kind kind, std::string_view text) {
  words out;
  for (auto w : pre_tokenizer(kind).split(text)) out.emplace_back(w);
  return out;
}
}  // namespace

TEST_CASE("llama3 pre-tokenizer splits llama.cpp's first tokenizer test string with 1/2 as a number") {
  CHECK(split(pre_tokenizer_kind::llama3, "ied 4 \xC2\xBD months") ==
        words{"ied", " ", "4", " ", "\xC2\xBD", " months"});
}

TEST_CASE("llama3 takes up to three digits per word, qwen2 one") {
  CHECK(split(pre_tokenizer_kind::llama3, "1234567") == words{"123", "456", "7"});
  CHECK(split(pre_tokenizer_kind::qwen2, "1234") == words{"1", "2", "3", "4"});
  CHECK(split(pre_tokenizer_kind::gpt2, " 1234 x") == words{" 1234", " x"});
}

TEST_CASE("llama3 contractions match in any case, gpt-2 only in lower case") {
  CHECK(split(pre_tokenizer_kind::llama3, "I'M we'Ve") == words{"I", "'M", " we", "'Ve"});
  CHECK(split(pre_tokenizer_kind::gpt2, "I'M we've") == words{"I", "'", "M", " we", "'ve"});
}

TEST_CASE("whitespace before a word leaves its last space to prefix the word") {
  CHECK(split(pre_tokenizer_kind::llama3, "a   b") == words{"a", "  ", " b"});
  CHECK(split(pre_tokenizer_kind::gpt2, "a   b") == words{"a", "  ", " b"});
}

TEST_CASE("llama3 keeps newlines up to the last one of a whitespace run together") {
  CHECK(split(pre_tokenizer_kind::llama3, "Hi\n\n  there") == words{"Hi", "\n\n", " ", " there"});
  CHECK(split(pre_tokenizer_kind::llama3, "x \n \n") == words{"x", " \n \n"});
}

TEST_CASE("punctuation takes trailing newlines with it in llama3") {
  CHECK(split(pre_tokenizer_kind::llama3, "ok.\n\nNext") == words{"ok", ".\n\n", "Next"});
}

TEST_CASE("U+0085 and U+3000 count as whitespace") {
  CHECK(split(pre_tokenizer_kind::llama3, "a\xC2\x85\xE3\x80\x80") == words{"a", "\xC2\x85\xE3\x80\x80"});
}

TEST_CASE("bytes that are not UTF-8 are kept as words of their own") {
  const auto w = split(pre_tokenizer_kind::llama3, "ab\xFF" "cd");
  std::string joined;
  for (const auto& s : w) joined += s;
  CHECK(joined == "ab\xFF" "cd");
  CHECK(w == words{"ab", "\xFF", "cd"});
}

TEST_CASE("unknown pre-tokenizer names are a usage error naming the preset") {
  CHECK_THROWS_WITH_AS(tg::tokenizer::pre_tokenizer_kind_from_name("falcon"),
                       doctest::Contains("pre-tokenizer 'falcon' is not supported"), tg::usage_error);
  CHECK(tg::tokenizer::pre_tokenizer_kind_from_name("llama-v3") == pre_tokenizer_kind::llama3);
  CHECK(tg::tokenizer::pre_tokenizer_kind_from_name("deepseek-r1-qwen") == pre_tokenizer_kind::qwen2);
}
