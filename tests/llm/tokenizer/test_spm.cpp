// test_spm.cpp: SentencePiece (llama.cpp's algorithm) on a hand-made vocabulary.
#include <doctest/doctest.h>

#include "tests/llm/tokenizer/tiny_vocab.hpp"
#include "llm/tokenizer/tokenizer.hpp"

using namespace tg::tokenizer;
using tg::tokenizer::test::scored_piece;
using tg::tokenizer::test::spm_byte;
using tg::tokenizer::test::spm_piece;
using tg::tokenizer::test::tiny_spm;
using ids = std::vector<token_id>;

namespace {
const std::string sp = "\xE2\x96\x81";  // U+2581

// 0 ▁, 1 a, 2 b, 3 c, 4 ab, 5 bc, 6 ▁a
vocabulary abc(float ab_score, float bc_score) {
  auto v = tiny_spm({{sp, -1}, {"a", -2}, {"b", -2}, {"c", -2}, {"ab", ab_score}, {"bc", bc_score}, {sp + "a", -5}});
  return v;
}
}  // namespace

TEST_CASE("spm merges the highest-scoring pair first") {
  CHECK(tokenizer(abc(-3, -4)).encode("abc", false, false) == ids{spm_piece(0), spm_piece(4), spm_piece(3)});
  CHECK(tokenizer(abc(-4, -3)).encode("abc", false, false) == ids{spm_piece(6), spm_piece(5)});
}

TEST_CASE("spm prefixes a space and writes spaces as U+2581") {
  const tokenizer tok(abc(-3, -4));
  CHECK(tok.encode("a b", false, false) == ids{spm_piece(6), spm_piece(0), spm_piece(2)});
  auto no_prefix = abc(-3, -4);
  no_prefix.add_space_prefix = false;
  CHECK(tokenizer(no_prefix).encode("a b", false, false) == ids{spm_piece(1), spm_piece(0), spm_piece(2)});
}

TEST_CASE("spm falls back to byte tokens for characters it has no piece for") {
  const tokenizer tok(abc(-3, -4));
  CHECK(tok.encode("\xC3\xA9", false, false) == ids{spm_piece(0), spm_byte(0xC3), spm_byte(0xA9)});
}

TEST_CASE("spm adds BOS by default and decode drops the prefixed space") {
  const tokenizer tok(abc(-3, -4));
  const ids with_bos = tok.encode("a b", true, false);
  CHECK(with_bos.front() == 1);
  const std::string text = "ab c\xC3\xA9 ";
  CHECK(tok.decode(tok.encode(text, false, false)) == text);
  CHECK(tok.decode(tok.encode("  two spaces", false, false)) == "  two spaces");
}

TEST_CASE("spm prefixes a space again after a parsed special token") {
  const tokenizer tok(abc(-3, -4));
  CHECK(tok.encode("a</s>a", false, true) == ids{spm_piece(6), 2, spm_piece(6)});
  CHECK(tok.decode(ids{spm_piece(6), 2, spm_piece(6)}, true) == "a</s> a");
}

TEST_CASE("spm decodes byte tokens to raw bytes") {
  const tokenizer tok(abc(-3, -4));
  CHECK(tok.token_bytes(spm_byte(0x0A)) == "\n");
  CHECK(tok.decode(ids{spm_piece(1), spm_byte(0xE4), spm_byte(0xBD), spm_byte(0xA0)}) == "a\xE4\xBD\xA0");
}

TEST_CASE("spm defaults to BOS 1, EOS 2 and unknown 0") {
  const tokenizer tok(abc(-3, -4));
  CHECK(tok.bos() == 1);
  CHECK(tok.eos() == 2);
  CHECK(tok.vocab().unk_id == 0);
  CHECK(tok.is_end_of_generation(2));
  CHECK_FALSE(tok.is_end_of_generation(1));
}

TEST_CASE("spm still merges across a newline when some token contains one") {
  // With "a\nb" in the vocabulary, newline is not a safe place to cut the text.
  auto v = tiny_spm({{"a", -1}, {"b", -1}, {"a\n", -2}, {"a\nb", -3}});
  v.add_space_prefix = false;
  CHECK(tokenizer(v).encode("a\nb\nb", false, false) == ids{spm_piece(3), spm_byte('\n'), spm_piece(1)});
  auto cut = tiny_spm({{"a", -1}, {"b", -1}, {"ab", -2}});
  cut.add_space_prefix = false;
  CHECK(tokenizer(cut).encode("ab\nab", false, false) == ids{spm_piece(2), spm_byte('\n'), spm_piece(2)});
}

TEST_CASE("spm keeps a stray UTF-8 lead byte from swallowing the following space") {
  const tokenizer tok(abc(-3, -4));
  const std::string text = "a\xE0 b";
  CHECK(tok.decode(tok.encode(text, false, false)) == text);
}
