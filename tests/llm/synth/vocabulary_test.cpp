// vocabulary_test.cpp: the built-in byte-level vocabulary, padding, and metadata copying.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "llm/gguf/gguf_file.hpp"
#include "llm/synth/vocabulary.hpp"

namespace tg::synth {
namespace {

std::vector<std::string> strings_of(const gguf::meta_value& v) {
  std::vector<std::string> out;
  for (const auto& e : v.elements()) out.push_back(e.text());
  return out;
}

std::vector<std::int64_t> integers_of(const gguf::meta_value& v) {
  std::vector<std::int64_t> out;
  for (const auto& e : v.elements()) out.push_back(static_cast<std::int32_t>(e.bits()));
  return out;
}

}  // namespace

TEST_CASE("the byte-level vocabulary maps every byte as GPT-2's bytes_to_unicode does") {
  const vocabulary v = byte_level_vocabulary(architecture::llama);
  const std::vector<std::string> tokens = strings_of(*v.find("tokenizer.ggml.tokens"));
  REQUIRE(tokens.size() >= 256);
  CHECK(tokens[0] == "!");                // byte 33 comes first, as in GPT-2's vocabulary
  CHECK(tokens[93] == "~");               // byte 126
  CHECK(tokens[94] == "\xC2\xA1");        // byte 161, U+00A1
  CHECK(tokens[187] == "\xC3\xBF");       // byte 255, U+00FF: the last of 188 kept bytes
  CHECK(tokens[188] == "\xC4\x80");       // byte 0 -> U+0100
  CHECK(tokens[188 + 32] == "\xC4\xA0");  // byte 32 (space) -> U+0120 'Ġ'
  CHECK(tokens[255] == "\xC5\x83");       // byte 173 -> U+0143, the last remapped byte
  CHECK(std::set<std::string>(tokens.begin(), tokens.end()).size() == tokens.size());
}

TEST_CASE("each merge of the byte-level vocabulary joins existing tokens into the next id") {
  for (const architecture arch : {architecture::llama, architecture::qwen2}) {
    const vocabulary v = byte_level_vocabulary(arch);
    const std::vector<std::string> tokens = strings_of(*v.find("tokenizer.ggml.tokens"));
    const std::vector<std::string> merges = strings_of(*v.find("tokenizer.ggml.merges"));
    CHECK(merges.size() == 30);
    std::set<std::string> known(tokens.begin(), tokens.begin() + 256);
    for (std::size_t i = 0; i < merges.size(); ++i) {
      CAPTURE(merges[i]);
      const std::size_t space = merges[i].find(' ');
      const std::string left = merges[i].substr(0, space), right = merges[i].substr(space + 1);
      CHECK(known.count(left) == 1);
      CHECK(known.count(right) == 1);
      CHECK(tokens[256 + i] == left + right);
      known.insert(left + right);
    }
  }
}

TEST_CASE("the byte-level vocabulary's special tokens follow the family") {
  SUBCASE("llama") {
    const vocabulary v = byte_level_vocabulary(architecture::llama);
    const std::vector<std::string> tokens = strings_of(*v.find("tokenizer.ggml.tokens"));
    CHECK(v.token_count == tokens.size());
    CHECK(tokens[v.find("tokenizer.ggml.bos_token_id")->bits()] == "<|begin_of_text|>");
    CHECK(tokens[v.find("tokenizer.ggml.eos_token_id")->bits()] == "<|eot_id|>");
    CHECK(v.find("tokenizer.ggml.pre")->text() == "llama-bpe");
    CHECK(v.find("tokenizer.ggml.add_bos_token")->bits() == 1);
    const std::vector<std::int64_t> types = integers_of(*v.find("tokenizer.ggml.token_type"));
    CHECK(types[0] == 1);
    CHECK(types.back() == 3);  // control
  }
  SUBCASE("qwen") {
    const vocabulary v = byte_level_vocabulary(architecture::qwen3);
    const std::vector<std::string> tokens = strings_of(*v.find("tokenizer.ggml.tokens"));
    CHECK(tokens[v.find("tokenizer.ggml.eos_token_id")->bits()] == "<|im_end|>");
    CHECK(tokens[v.find("tokenizer.ggml.padding_token_id")->bits()] == "<|endoftext|>");
    CHECK(v.find("tokenizer.ggml.pre")->text() == "qwen2");
    CHECK(v.find("tokenizer.ggml.add_bos_token")->bits() == 0);
  }
}

TEST_CASE("pad_vocabulary appends unused [PADn] tokens to every per-token array") {
  vocabulary v = byte_level_vocabulary(architecture::qwen2);
  const std::uint64_t before = v.token_count;
  pad_vocabulary(v, before + 3);
  CHECK(v.token_count == before + 3);
  const std::vector<std::string> tokens = strings_of(*v.find("tokenizer.ggml.tokens"));
  REQUIRE(tokens.size() == before + 3);
  CHECK(tokens.back() == "[PAD" + std::to_string(before + 2) + "]");
  const std::vector<std::int64_t> types = integers_of(*v.find("tokenizer.ggml.token_type"));
  REQUIRE(types.size() == before + 3);
  CHECK(types.back() == 5);
  CHECK_THROWS_WITH_AS(pad_vocabulary(v, 10),
                       ("synth: pad_vocabulary: cannot pad a vocabulary of " + std::to_string(before + 3) +
                        " tokens down to 10")
                           .c_str(),
                       usage_error);
}

TEST_CASE("to_meta_value copies every value type, arrays of arrays included") {
  gguf::writer w;
  w.add("a.u8", gguf::meta_value::u8(200));
  w.add("a.i16", gguf::meta_value::i16(-300));
  w.add("a.u64", gguf::meta_value::u64(1ull << 40));
  w.add("a.f64", gguf::meta_value::f64(0.1));
  w.add("a.bool", gguf::meta_value::boolean(true));
  w.add("a.str", gguf::meta_value::string("héllo"));
  const std::vector<float> f{1.5f, -2.0f};
  const std::vector<std::int32_t> i{3, 4};
  w.add("a.nested", gguf::meta_value::array(gguf::value_type::array,
                                            {gguf::meta_value::f32_array(f), gguf::meta_value::i32_array(i)}));
  const std::vector<std::byte> original = w.to_bytes();
  const gguf::file f1 = gguf::file::from_memory(original, "original");
  gguf::writer copy;
  for (const auto& e : f1.metadata()) copy.add(std::string(e.key), to_meta_value(e.val));
  CHECK(copy.to_bytes() == original);
}

TEST_CASE("copy_vocabulary takes only tokenizer keys and needs a token list") {
  gguf::writer w;
  w.add("general.architecture", gguf::meta_value::string("llama"));
  const std::vector<std::string> tokens{"a", "b"};
  w.add("tokenizer.ggml.tokens", gguf::meta_value::string_array(tokens));
  w.add("tokenizer.chat_template", gguf::meta_value::string("{{ x }}"));
  const std::vector<std::byte> bytes = w.to_bytes();
  const vocabulary v = copy_vocabulary(gguf::file::from_memory(bytes, "vocab.gguf"));
  CHECK(v.token_count == 2);
  CHECK(v.keys.size() == 2);
  CHECK(v.find("tokenizer.chat_template")->text() == "{{ x }}");
  CHECK(v.find("general.architecture") == nullptr);

  gguf::writer empty;
  empty.add("general.architecture", gguf::meta_value::string("llama"));
  const std::vector<std::byte> no_tokens = empty.to_bytes();
  CHECK_THROWS_WITH_AS(copy_vocabulary(gguf::file::from_memory(no_tokens, "model.gguf")),
                       "synth: copy_vocabulary: model.gguf has no tokenizer.ggml.tokens string array (is it a model "
                       "or vocabulary GGUF?)",
                       usage_error);
}

}  // namespace tg::synth
