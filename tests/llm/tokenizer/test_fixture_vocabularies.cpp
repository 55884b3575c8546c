// test_fixture_vocabularies.cpp: special ids, special-token parsing, streaming and chat
// rendering on the real vocabularies in the fixtures.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tests/llm/tokenizer/fixture_tokenizers.hpp"
#include "llm/tokenizer/byte_level.hpp"
#include "llm/tokenizer/chat_template.hpp"

using namespace tg::tokenizer;
using ids = std::vector<token_id>;

TEST_CASE("from_gguf reads the special ids and fills in llama.cpp's defaults") {
  SUBCASE("llama-bpe: BOS added, EOT found by name") {
    const tokenizer& tok = test::fixture_tokenizer("llama-bpe");
    CHECK(tok.model() == tokenizer::kind::byte_level_bpe);
    CHECK(tok.size() == 128256);
    CHECK(tok.bos() == 128000);
    CHECK(tok.eos() == 128001);
    CHECK(tok.eot() == 128009);
    CHECK(tok.adds_bos());
  }
  SUBCASE("qwen2: no BOS, EOS is <|im_end|>") {
    const tokenizer& tok = test::fixture_tokenizer("qwen2");
    CHECK(tok.size() == 151669);
    CHECK_FALSE(tok.bos().has_value());
    CHECK(tok.eos() == 151645);
    CHECK(tok.eot() == 151645);
    CHECK_FALSE(tok.adds_bos());
  }
  SUBCASE("llama-spm: SentencePiece with BOS 1, EOS 2, UNK 0") {
    const tokenizer& tok = test::fixture_tokenizer("llama-spm");
    CHECK(tok.model() == tokenizer::kind::sentencepiece);
    CHECK(tok.bos() == 1);
    CHECK(tok.eos() == 2);
    CHECK(tok.vocab().unk_id == 0);
    CHECK(tok.adds_bos());
  }
  SUBCASE("gpt-2: BOS and EOS are <|endoftext|>, BOS not added") {
    const tokenizer& tok = test::fixture_tokenizer("gpt-2");
    CHECK(tok.eos() == 50256);
    CHECK_FALSE(tok.adds_bos());
  }
}

TEST_CASE("encode adds BOS when asked and the vocabulary wants it") {
  CHECK(test::fixture_tokenizer("llama-bpe").encode("Hello world", true, false) == ids{128000, 9906, 1917});
  CHECK(test::fixture_tokenizer("llama-spm").encode("Hello world", true, false) == ids{1, 15043, 3186});
  CHECK(test::fixture_tokenizer("qwen2").encode("Hello world", true, false) == ids{9707, 1879});
}

TEST_CASE("special-token text becomes one id only when parse_special is set") {
  const tokenizer& qwen = test::fixture_tokenizer("qwen2");
  CHECK(qwen.encode("<|im_start|>user", false, true).front() == 151644);
  CHECK(qwen.encode("<|im_start|>user", false, false).front() != 151644);
  // <think> is user-defined: matched either way, as llama.cpp and Hugging Face do.
  CHECK(qwen.encode("<think>", false, false) == ids{151667});
  const tokenizer& llama = test::fixture_tokenizer("llama-bpe");
  CHECK(llama.encode("<|eot_id|><|start_header_id|>", false, true) == ids{128009, 128006});
}

TEST_CASE("the end-of-generation set holds EOS, EOT and end-of-turn names") {
  const tokenizer& llama = test::fixture_tokenizer("llama-bpe");
  CHECK(llama.is_end_of_generation(128001));
  CHECK(llama.is_end_of_generation(128009));
  CHECK_FALSE(llama.is_end_of_generation(128006));
  CHECK_FALSE(llama.is_end_of_generation(9906));
  const tokenizer& qwen = test::fixture_tokenizer("qwen2");
  CHECK(qwen.is_end_of_generation(151645));
  CHECK(qwen.is_end_of_generation(151643));  // <|endoftext|>
  CHECK_FALSE(qwen.is_end_of_generation(151644));
}

TEST_CASE("streaming a Qwen emoji split over two tokens yields a space, then the emoji") {
  // tinygrad's test/null/test_llm_tokenizer.py: test_stream_decoder uses tokens 25677 (bytes 20 F0 9F 98) and 138 (8A);
  // in this vocabulary those bytes are tokens 26525 and 232, so look them up by content.
  const tokenizer& qwen = test::fixture_tokenizer("qwen2");
  const token_id head = qwen.find_token(byte_level::encode(" \xF0\x9F\x98"));
  const token_id tail = qwen.find_token(byte_level::encode("\x8A"));
  CHECK(head == 26525);
  CHECK(tail == 232);
  stream_decoder stream(qwen);
  CHECK(stream.push(head) == " ");
  CHECK(stream.push(tail) == "\xF0\x9F\x98\x8A");
  CHECK(stream.flush().empty());
}

TEST_CASE("streaming SentencePiece byte tokens joins a character split over three tokens") {
  const tokenizer& spm = test::fixture_tokenizer("llama-spm");
  const token_id e4 = spm.find_token("<0xE4>"), bd = spm.find_token("<0xBD>"), a0 = spm.find_token("<0xA0>");
  stream_decoder stream(spm);
  CHECK(stream.push(e4).empty());
  CHECK(stream.push(bd).empty());
  CHECK(stream.push(a0) == "\xE4\xBD\xA0");
}

namespace {
std::string golden_chat(const std::string& vocabulary, const std::string& name) {
  std::ifstream in(std::string(TG_TOKENIZER_GOLDEN) + "/chat/" + vocabulary + "/" + name + ".txt", std::ios::binary);
  REQUIRE_MESSAGE(in, "missing golden chat/", vocabulary, "/", name, ".txt");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

const std::vector<chat_message> conversation = {
    {"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye"}};
chat_options make_no_prompt() {
  chat_options options;
  options.add_generation_prompt = false;
  return options;
}
const chat_options no_prompt = make_no_prompt();
}  // namespace

TEST_CASE("the fixtures' chat templates are recognized") {
  const auto llama = chat_template::for_vocabulary(test::fixture_tokenizer("llama-bpe").vocab());
  CHECK(llama.recognized());
  CHECK(llama.style() == chat_style::llama3);
  const auto qwen = chat_template::for_vocabulary(test::fixture_tokenizer("qwen2").vocab());
  CHECK(qwen.recognized());
  CHECK(qwen.style() == chat_style::qwen3);
  const auto spm = chat_template::for_vocabulary(test::fixture_tokenizer("llama-spm").vocab());
  CHECK_FALSE(spm.recognized());
  CHECK(spm.style() == chat_style::llama2);
}

TEST_CASE("chat rendering matches Jinja2's rendering of the fixtures' templates") {
  for (const std::string vocabulary : {"llama-bpe", "qwen2"}) {
    const auto chat = chat_template::for_vocabulary(test::fixture_tokenizer(vocabulary).vocab());
    INFO(vocabulary);
    CHECK(chat.render(std::vector<chat_message>{{"user", "Hi"}}) == golden_chat(vocabulary, "hi"));
    CHECK(chat.render(conversation) == golden_chat(vocabulary, "conversation"));
    CHECK(chat.render(conversation, no_prompt) ==
          golden_chat(vocabulary, "conversation_no_prompt"));
    CHECK(chat.render(std::vector<chat_message>{{"user", "  Hello there \n"}}) ==
          golden_chat(vocabulary, "whitespace"));
  }
}

TEST_CASE("qwen3 rendering of thinking, no-thinking and tool turns matches Jinja2") {
  const auto chat = chat_template::for_vocabulary(test::fixture_tokenizer("qwen2").vocab());
  const std::vector<chat_message> thinking = {{"user", "Q1"},
                                              {"assistant", "<think>\nhmm\n</think>\n\nA1"},
                                              {"user", "Q2"},
                                              {"assistant", "<think>\nr2\n\n</think>\nA2"}};
  CHECK(chat.render(thinking, no_prompt) == golden_chat("qwen2", "thinking_history"));
  chat_options no_thinking;
  no_thinking.enable_thinking = false;
  CHECK(chat.render(std::vector<chat_message>{{"user", "Hi"}}, no_thinking) == golden_chat("qwen2", "no_thinking"));
  const std::vector<chat_message> tools = {
      {"user", "Weather?"}, {"assistant", "Checking."}, {"tool", "{\"t\": 20}"}, {"tool", "{\"t\": 21}"}};
  CHECK(chat.render(tools) == golden_chat("qwen2", "tool_turns"));
}

TEST_CASE("a rendered chat prompt tokenizes its markers as special tokens") {
  const tokenizer& qwen = test::fixture_tokenizer("qwen2");
  const auto chat = chat_template::for_vocabulary(qwen.vocab());
  const ids prompt = qwen.encode(chat.render(std::vector<chat_message>{{"user", "Hi"}}), false, true);
  CHECK(std::count(prompt.begin(), prompt.end(), 151644) == 2);
  CHECK(std::count(prompt.begin(), prompt.end(), 151645) == 1);
  const tokenizer& llama = test::fixture_tokenizer("llama-bpe");
  const ids llama_prompt =
      llama.encode(chat_template::for_vocabulary(llama.vocab()).render(std::vector<chat_message>{{"user", "Hi"}}),
                   false, true);
  CHECK(llama_prompt.front() == 128000);
  CHECK(llama_prompt[1] == 128006);
}
