// test_vocabulary_from_gguf.cpp: the GGUF adapter on small files written in memory.
#include <doctest/doctest.h>

#include "llm/gguf/gguf_file.hpp"
#include "llm/gguf/gguf_writer.hpp"
#include <tg/core/error.hpp>
#include "llm/tokenizer/tokenizer.hpp"
#include "llm/tokenizer/vocabulary_from_gguf.hpp"

using namespace tg::tokenizer;
using tg::gguf::meta_value;

namespace {
const std::vector<std::string> tokens = {"a", "b", "ab", "<|im_end|>"};

tg::gguf::writer bpe_writer() {
  tg::gguf::writer w;
  w.add("tokenizer.ggml.model", meta_value::string("gpt2"));
  w.add("tokenizer.ggml.pre", meta_value::string("qwen2"));
  w.add("tokenizer.ggml.tokens", meta_value::string_array(tokens));
  const std::vector<std::int32_t> types = {1, 1, 1, 3};
  w.add("tokenizer.ggml.token_type", meta_value::i32_array(types));
  const std::vector<std::string> merges = {"a b"};
  w.add("tokenizer.ggml.merges", meta_value::string_array(merges));
  return w;
}
}  // namespace

TEST_CASE("vocabulary_from_gguf copies the tokenizer keys and leaves absent ones unset") {
  auto w = bpe_writer();
  w.add("tokenizer.ggml.eos_token_id", meta_value::u32(3));
  w.add("tokenizer.chat_template", meta_value::string("<|im_start|>"));
  const auto bytes = w.to_bytes();
  const auto file = tg::gguf::file::from_memory(bytes, "tiny.gguf");
  const vocabulary v = vocabulary_from_gguf(file);
  CHECK(v.model == "gpt2");
  CHECK(v.pre == "qwen2");
  CHECK(v.tokens == tokens);
  CHECK(v.types == std::vector<token_type>{token_type::normal, token_type::normal, token_type::normal,
                                           token_type::control});
  CHECK(v.merges == std::vector<std::string>{"a b"});
  CHECK(v.eos_id == 3);
  CHECK_FALSE(v.bos_id.has_value());
  CHECK_FALSE(v.add_bos.has_value());
  CHECK(v.chat_template == "<|im_start|>");
}

TEST_CASE("a special id written as -1 means the file has none") {
  auto w = bpe_writer();
  w.add("tokenizer.ggml.bos_token_id", meta_value::i32(-1));
  w.add("tokenizer.ggml.padding_token_id", meta_value::u32(0xFFFFFFFFu));
  const auto bytes = w.to_bytes();
  const vocabulary v = vocabulary_from_gguf(tg::gguf::file::from_memory(bytes, "tiny.gguf"));
  CHECK_FALSE(v.bos_id.has_value());
  CHECK_FALSE(v.pad_id.has_value());
}

TEST_CASE("tokenizer::from_gguf builds a working tokenizer from a file") {
  const auto bytes = bpe_writer().to_bytes();
  const auto tok = tokenizer::from_gguf(tg::gguf::file::from_memory(bytes, "tiny.gguf"));
  CHECK(tok.encode("ab<|im_end|>", false, true) == std::vector<token_id>{2, 3});
  CHECK(tok.eot() == 3);
}

TEST_CASE("a file without tokenizer.ggml.model is a usage error naming the file") {
  tg::gguf::writer w;
  w.add("general.architecture", meta_value::string("llama"));
  const auto bytes = w.to_bytes();
  CHECK_THROWS_WITH_AS(vocabulary_from_gguf(tg::gguf::file::from_memory(bytes, "weights-only.gguf")),
                       doctest::Contains("weights-only.gguf has no tokenizer.ggml.model"), tg::usage_error);
}
