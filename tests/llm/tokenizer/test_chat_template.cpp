// test_chat_template.cpp: recognizing templates and rendering each style.
#include <doctest/doctest.h>

#include <tg/core/error.hpp>
#include "tests/llm/tokenizer/tiny_vocab.hpp"
#include "llm/tokenizer/chat_template.hpp"

using namespace tg::tokenizer;
using messages = std::vector<chat_message>;

namespace {
const messages hi = {{"user", "Hi"}};
const messages conversation = {
    {"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye"}};
chat_options make_no_prompt() {
  chat_options options;
  options.add_generation_prompt = false;
  return options;
}
const chat_options no_prompt = make_no_prompt();
}  // namespace

TEST_CASE("templates are recognized by the markers they contain") {
  CHECK(recognize_chat_template("{{ '<|start_header_id|>' + role + '<|end_header_id|>' }}") == chat_style::llama3);
  CHECK(recognize_chat_template("<|start_header_id|><|end_header_id|>Cutting Knowledge Date:") ==
        chat_style::llama3_1);
  CHECK(recognize_chat_template("<|im_start|>system\nYou are a helpful assistant.") == chat_style::qwen2);
  CHECK(recognize_chat_template("You are Qwen, created by Alibaba Cloud. <|im_start|>") == chat_style::qwen2_5);
  CHECK(recognize_chat_template("<|im_start|> <think>") == chat_style::qwen3);
  CHECK(recognize_chat_template("<|im_start|>") == chat_style::chatml);
  CHECK(recognize_chat_template("[INST] <<SYS>>") == chat_style::llama2);
  CHECK_FALSE(recognize_chat_template("<|user|>\n{{ content }}").has_value());
}

TEST_CASE("a one-message Llama 3 prompt matches tinygrad's FallbackTemplate") {
  const chat_template t(chat_style::llama3, "<|begin_of_text|>", "<|eot_id|>");
  CHECK(t.render(hi) ==
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST_CASE("a one-message ChatML prompt matches tinygrad's FallbackTemplate") {
  const chat_template t(chat_style::chatml, "", "<|im_end|>");
  CHECK(t.render(hi) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  CHECK(t.render(hi, no_prompt) == "<|im_start|>user\nHi<|im_end|>\n");
}

TEST_CASE("llama3 trims message content") {
  const chat_template t(chat_style::llama3, "<|begin_of_text|>", "<|eot_id|>");
  CHECK(t.render(messages{{"user", " \n Hi \t"}}, no_prompt) ==
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
}

TEST_CASE("llama3.1 opens with a dated system block holding the system message") {
  const chat_template t(chat_style::llama3_1, "<|begin_of_text|>", "<|eot_id|>");
  chat_options options;
  options.today = "02 Jan 2025";
  CHECK(t.render(messages{{"system", "Be brief."}, {"user", "Hi"}}, options) ==
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
        "Cutting Knowledge Date: December 2023\nToday Date: 02 Jan 2025\n\nBe brief.<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST_CASE("llama2 wraps the system message into the first instruction") {
  const chat_template t(chat_style::llama2, "<s>", "</s>");
  CHECK(t.render(conversation) ==
        "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello! </s><s>[INST] Bye [/INST]");
  CHECK(t.render(hi) == "<s>[INST] Hi [/INST]");
}

TEST_CASE("llama2 rejects roles that do not alternate") {
  const chat_template t(chat_style::llama2, "<s>", "</s>");
  CHECK_THROWS_WITH_AS(t.render(messages{{"user", "a"}, {"user", "b"}}),
                       doctest::Contains("roles must alternate"), tg::usage_error);
}

TEST_CASE("qwen2 and qwen2.5 add their default system prompts") {
  CHECK(chat_template(chat_style::qwen2, "", "").render(hi) ==
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  CHECK(chat_template(chat_style::qwen2_5, "", "").render(hi) ==
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  CHECK(chat_template(chat_style::qwen2_5, "", "").render(messages{{"system", "S"}, {"user", "Hi"}}) ==
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST_CASE("qwen3 drops reasoning from turns before the last user message") {
  const chat_template t(chat_style::qwen3, "", "");
  const messages m = {{"user", "Q1"}, {"assistant", "<think>\nhmm\n</think>\n\nA1"}, {"user", "Q2"}};
  CHECK(t.render(m) ==
        "<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n"
        "<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n");
}

TEST_CASE("qwen3 can ask for an answer without thinking") {
  const chat_template t(chat_style::qwen3, "", "");
  chat_options options;
  options.enable_thinking = false;
  CHECK(t.render(hi, options) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST_CASE("a vocabulary without a known template gets its family's built-in") {
  auto spm = test::tiny_spm({});
  spm.chat_template = "{{ something unknown }}";
  const auto t = chat_template::for_vocabulary(spm);
  CHECK(t.style() == chat_style::llama2);
  CHECK_FALSE(t.recognized());
  auto gpt2 = test::tiny_bpe({}, {}, "gpt-2");
  CHECK_THROWS_WITH_AS(chat_template::for_vocabulary(gpt2), doctest::Contains("no known template"),
                       tg::usage_error);
}
