// vocabulary_from_gguf.cpp: the GGUF adapter, and tokenizer::from_gguf built on it.
#include "llm/tokenizer/vocabulary_from_gguf.hpp"

#include <cstdint>

#include <tg/core/error.hpp>
#include "llm/tokenizer/tokenizer.hpp"

namespace tg::tokenizer {

namespace {

std::optional<token_id> find_id(const tg::gguf::file& file, std::string_view key) {
  // Read as int64 so both uint32 and int32 keys convert; some converters write -1 (or
  // 0xFFFFFFFF) for "none".
  const std::optional<std::int64_t> id = file.find_i64(key);
  if (!id || *id < 0 || *id > INT32_MAX) return std::nullopt;
  return token_id(*id);
}

std::vector<std::string> copy_strings(std::span<const std::string_view> items) {
  return {items.begin(), items.end()};
}

}  // namespace

vocabulary vocabulary_from_gguf(const tg::gguf::file& file) {
  vocabulary vocab;
  const std::optional<std::string_view> model = file.find_string("tokenizer.ggml.model");
  if (!model)
    throw usage_error(str("tokenizer: ", file.name(), " has no tokenizer.ggml.model (is it a model file?)"));
  vocab.model = *model;
  vocab.pre = file.find_string("tokenizer.ggml.pre").value_or("default");
  vocab.tokens = copy_strings(file.get_string_array("tokenizer.ggml.tokens"));
  if (const auto types = file.find_i32_array("tokenizer.ggml.token_type")) {
    vocab.types.reserve(types->size());
    for (const std::int32_t t : *types) vocab.types.push_back(token_type(t));
  }
  vocab.scores = file.find_f32_array("tokenizer.ggml.scores").value_or(std::vector<float>{});
  if (const auto merges = file.find_string_array("tokenizer.ggml.merges")) vocab.merges = copy_strings(*merges);
  vocab.bos_id = find_id(file, "tokenizer.ggml.bos_token_id");
  vocab.eos_id = find_id(file, "tokenizer.ggml.eos_token_id");
  vocab.eot_id = find_id(file, "tokenizer.ggml.eot_token_id");
  vocab.eom_id = find_id(file, "tokenizer.ggml.eom_token_id");
  vocab.unk_id = find_id(file, "tokenizer.ggml.unknown_token_id");
  vocab.pad_id = find_id(file, "tokenizer.ggml.padding_token_id");
  vocab.add_bos = file.find_bool("tokenizer.ggml.add_bos_token");
  vocab.add_eos = file.find_bool("tokenizer.ggml.add_eos_token");
  vocab.add_space_prefix = file.find_bool("tokenizer.ggml.add_space_prefix");
  vocab.chat_template = file.find_string("tokenizer.chat_template").value_or("");
  return vocab;
}

tokenizer tokenizer::from_gguf(const tg::gguf::file& file) { return tokenizer(vocabulary_from_gguf(file)); }

}  // namespace tg::tokenizer
