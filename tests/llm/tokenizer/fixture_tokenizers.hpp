// fixture_tokenizers.hpp: the four fixture vocabularies, each loaded once per test run.
#pragma once
#include <filesystem>
#include <map>
#include <string>

#include "tests/support/fixtures.hpp"
#include "llm/gguf/gguf_file.hpp"
#include "llm/tokenizer/tokenizer.hpp"

namespace tg::tokenizer::test {

inline constexpr const char* fixture_vocabularies[] = {"llama-spm", "llama-bpe", "qwen2", "gpt-2"};

inline std::filesystem::path fixture_path(const std::string& name) {
  return tg::test::fixture("tokenizer/ggml-vocab-" + name + ".gguf");
}

inline const tokenizer& fixture_tokenizer(const std::string& name) {
  static std::map<std::string, tokenizer> loaded;
  auto it = loaded.find(name);
  if (it == loaded.end())
    it = loaded.emplace(name, tokenizer::from_gguf(tg::gguf::file::open(fixture_path(name)))).first;
  return it->second;
}

}  // namespace tg::tokenizer::test
