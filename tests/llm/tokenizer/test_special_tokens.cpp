// test_special_tokens.cpp: special-token parsing, BOS/EOS and end-of-generation ids.
#include <doctest/doctest.h>

#include <tg/core/error.hpp>
#include "tests/llm/tokenizer/tiny_vocab.hpp"
#include "llm/tokenizer/tokenizer.hpp"

using namespace tg::tokenizer;
using tg::tokenizer::test::tiny_bpe;
using ids = std::vector<token_id>;

namespace {
// 256 <|end|> (control), 257 <|end|>x (control), 258 <think> (user-defined)
vocabulary with_specials() { return tiny_bpe({}, {}, "gpt-2", {"<|end|>", "<|end|>x"}, {"<think>"}); }
}  // namespace

TEST_CASE("control-token text is plain text unless parse_special is set") {
  const tokenizer tok(with_specials());
  const ids plain = tok.encode("a<|end|>", false, false);
  CHECK(plain.size() > 2);
  CHECK(tok.decode(plain) == "a<|end|>");
  CHECK(tok.encode("a<|end|>", false, true) == ids{'a', 256});
}

TEST_CASE("user-defined tokens are matched even without parse_special") {
  const tokenizer tok(with_specials());
  CHECK(tok.encode("<think>a", false, false) == ids{258, 'a'});
}

TEST_CASE("the longest special token at a position wins") {
  const tokenizer tok(with_specials());
  CHECK(tok.encode("<|end|>xy<|end|>", false, true) == ids{257, 'y', 256});
}

TEST_CASE("control tokens decode to nothing unless render_special is set") {
  const tokenizer tok(with_specials());
  CHECK(tok.decode(ids{'a', 256, 258}) == "a<think>");
  CHECK(tok.decode(ids{'a', 256, 258}, true) == "a<|end|><think>");
}

TEST_CASE("add_bos prepends BOS and appends EOS as the vocabulary asks") {
  auto v = with_specials();
  v.bos_id = 257;
  v.eos_id = 256;
  v.add_bos = true;
  v.add_eos = true;
  const tokenizer tok(v);
  CHECK(tok.encode("a", true, false) == ids{257, 'a', 256});
  CHECK(tok.encode("a", false, false) == ids{'a'});
}

TEST_CASE("end of generation covers EOS, EOT and tokens named like an end of turn") {
  auto v = tiny_bpe({}, {}, "qwen2", {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|eom_id|>"});
  v.eos_id = 256;
  const tokenizer tok(v);
  CHECK(tok.eot() == 258);  // found by name: <|im_end|>
  CHECK(tok.is_end_of_generation(256));
  CHECK(tok.is_end_of_generation(258));
  CHECK(tok.is_end_of_generation(259));
  CHECK_FALSE(tok.is_end_of_generation(257));
  CHECK_FALSE(tok.is_end_of_generation('a'));
  CHECK_FALSE(tok.is_end_of_generation(-1));
}

TEST_CASE("token ids outside the vocabulary are usage errors") {
  const tokenizer tok(with_specials());
  CHECK_THROWS_WITH_AS(tok.decode(ids{'a', 9999}), doctest::Contains("token id 9999 is outside the vocabulary"),
                       tg::usage_error);
  auto v = with_specials();
  v.eos_id = 100000;
  CHECK_THROWS_WITH_AS(tokenizer{v}, doctest::Contains("special token id 100000"), tg::usage_error);
}

TEST_CASE("a vocabulary of an unknown model is a usage error") {
  auto v = with_specials();
  v.model = "rwkv";
  CHECK_THROWS_WITH_AS(tokenizer{v}, doctest::Contains("model 'rwkv' is not supported"), tg::usage_error);
}

TEST_CASE("stream_decoder emits a character split over two tokens once it is complete") {
  const tokenizer tok(tiny_bpe({"\xF0\x9F"}, {"\xF0 \x9F"}));
  stream_decoder stream(tok);
  CHECK(stream.push(' ') == " ");
  CHECK(stream.push(tg::tokenizer::test::word_id(0)) == "");
  CHECK(stream.push(0x98) == "");
  CHECK(stream.push(0x8A) == "\xF0\x9F\x98\x8A");
  CHECK(stream.push(0xFF) == "\xEF\xBF\xBD");
  CHECK(stream.flush() == "");
}
