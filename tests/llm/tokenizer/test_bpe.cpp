// test_bpe.cpp: byte-level BPE on hand-made vocabularies.
#include <doctest/doctest.h>

#include <tg/core/error.hpp>
#include "tests/llm/tokenizer/tiny_vocab.hpp"
#include "llm/tokenizer/tokenizer.hpp"

using namespace tg::tokenizer;
using tg::tokenizer::test::tiny_bpe;
using tg::tokenizer::test::word_id;
using ids = std::vector<token_id>;

namespace {
ids encode(const vocabulary& v, std::string_view text) { return tokenizer(v).encode(text, false, false); }
}  // namespace

TEST_CASE("bpe merges the best-ranked pair first, wherever it is in the word") {
  // words: 0 "ab", 1 "bc"
  CHECK(encode(tiny_bpe({"ab", "bc"}, {"b c", "a b"}), "abc") == ids{'a', word_id(1)});
  CHECK(encode(tiny_bpe({"ab", "bc"}, {"a b", "b c"}), "abc") == ids{word_id(0), 'c'});
}

TEST_CASE("bpe merges equal pairs from the left") {
  CHECK(encode(tiny_bpe({"aa"}, {"a a"}), "aaa") == ids{word_id(0), 'a'});
  CHECK(encode(tiny_bpe({"aa", "aaaa"}, {"a a", "aa aa"}), "aaaaa") == ids{word_id(1), 'a'});
}

TEST_CASE("bpe keeps merging the merged symbols") {
  const auto v = tiny_bpe({"he", "ll", "hell", "hello"}, {"h e", "l l", "he ll", "hell o"});
  CHECK(encode(v, "hello") == ids{word_id(3)});
  CHECK(encode(v, "hellhe") == ids{word_id(2), word_id(0)});
}

TEST_CASE("bpe without a merges list merges the pair that forms the lowest id") {
  // "bc" (id 256) ranks before "ab" (257).
  CHECK(encode(tiny_bpe({"bc", "ab"}, {}), "abc") == ids{'a', word_id(0)});
  CHECK(encode(tiny_bpe({"ab", "bc"}, {}), "abc") == ids{word_id(0), 'c'});
}

TEST_CASE("the llama3 preset emits a word that is a token whole, before merging") {
  // "abc" exists but no merge chain reaches it.
  const std::vector<std::string> words = {"ab", "abc"};
  CHECK(encode(tiny_bpe(words, {"a b"}, "llama-bpe"), "abc") == ids{word_id(1)});
  CHECK(encode(tiny_bpe(words, {"a b"}, "gpt-2"), "abc") == ids{word_id(0), 'c'});
}

TEST_CASE("bpe never merges across pre-tokenizer words") {
  const auto v = tiny_bpe({"a ", " b"}, {"a  ", "  b"});  // merges "a"+" " and " "+"b"
  CHECK(encode(v, "a b") == ids{'a', word_id(1)});
}

TEST_CASE("bpe encodes bytes that are not UTF-8 through their byte tokens") {
  CHECK(encode(tiny_bpe({}, {}), "a\xFF") == ids{'a', 0xFF});
}

TEST_CASE("bpe decode inverts encode on arbitrary bytes") {
  const tokenizer tok(tiny_bpe({"he", "ll", "hell", "hello"}, {"h e", "l l", "he ll", "hell o"}));
  const std::string text = "hello \xE4\xBD\xA0\n\t\x01\xFF world";
  CHECK(tok.decode(tok.encode(text, false, false)) == text);
}

TEST_CASE("a merge line without a space is a usage error") {
  auto v = tiny_bpe({"ab"}, {});
  v.merges = {"ab"};
  CHECK_THROWS_WITH_AS(tokenizer{v}, doctest::Contains("merge 0 'ab' is not two tokens"), tg::usage_error);
}

TEST_CASE("bpe defaults add_bos to true only for the llama3 preset") {
  auto llama = tiny_bpe({}, {}, "llama-bpe", {"<|begin_of_text|>"});
  llama.bos_id = 256;
  CHECK(tokenizer(llama).encode("a", true, false) == ids{256, 'a'});
  CHECK(tokenizer(llama).encode("a", false, false) == ids{'a'});
  auto qwen = tiny_bpe({}, {}, "qwen2", {"<|endoftext|>"});
  qwen.bos_id = 256;
  CHECK(tokenizer(qwen).encode("a", true, false) == ids{'a'});
}
