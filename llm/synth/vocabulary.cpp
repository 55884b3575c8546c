// vocabulary.cpp: copying tokenizer keys between files, and padding a vocabulary.
#include "llm/synth/vocabulary.hpp"

#include <bit>

#include <tg/core/error.hpp>

namespace tg::synth {

using gguf::meta_value;
using gguf::value_type;

namespace {

constexpr std::string_view tokens_key = "tokenizer.ggml.tokens";
constexpr std::int32_t unused_token_type = 5;  // gguf-py/gguf/constants.py: TokenType.UNUSED

meta_value scalar_to_meta(const gguf::value& v) {
  const std::uint64_t b = v.bits();
  switch (v.type()) {
    case value_type::u8: return meta_value::u8(static_cast<std::uint8_t>(b));
    case value_type::i8: return meta_value::i8(static_cast<std::int8_t>(static_cast<std::uint8_t>(b)));
    case value_type::u16: return meta_value::u16(static_cast<std::uint16_t>(b));
    case value_type::i16: return meta_value::i16(static_cast<std::int16_t>(static_cast<std::uint16_t>(b)));
    case value_type::u32: return meta_value::u32(static_cast<std::uint32_t>(b));
    case value_type::i32: return meta_value::i32(static_cast<std::int32_t>(static_cast<std::uint32_t>(b)));
    case value_type::f32: return meta_value::f32(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
    case value_type::boolean: return meta_value::boolean(b != 0);
    case value_type::u64: return meta_value::u64(b);
    case value_type::i64: return meta_value::i64(static_cast<std::int64_t>(b));
    case value_type::f64: return meta_value::f64(std::bit_cast<double>(b));
    case value_type::string: return meta_value::string(std::string(v.to_string().value_or("")));
    case value_type::array: break;
  }
  TG_UNREACHABLE("scalar_to_meta called with an array");
}

// A number of an array's element type, for padding arrays of any numeric type.
meta_value number_of_type(value_type type, std::int32_t n) {
  switch (type) {
    case value_type::u8: return meta_value::u8(static_cast<std::uint8_t>(n));
    case value_type::i8: return meta_value::i8(static_cast<std::int8_t>(n));
    case value_type::u16: return meta_value::u16(static_cast<std::uint16_t>(n));
    case value_type::i16: return meta_value::i16(static_cast<std::int16_t>(n));
    case value_type::u32: return meta_value::u32(static_cast<std::uint32_t>(n));
    case value_type::i32: return meta_value::i32(n);
    case value_type::u64: return meta_value::u64(static_cast<std::uint64_t>(n));
    case value_type::i64: return meta_value::i64(n);
    case value_type::f32: return meta_value::f32(static_cast<float>(n));
    case value_type::f64: return meta_value::f64(n);
    default:
      throw usage_error(str("synth: pad_vocabulary: cannot pad an array of ", gguf::value_type_name(type)));
  }
}

// Rebuilds the array stored under `key` (if any) with `count` more elements made by `make`.
template <class Make>
void extend_array(vocabulary& vocab, std::string_view key, std::uint64_t count, Make make) {
  for (auto& [k, v] : vocab.keys) {
    if (k != key) continue;
    if (v.type() != value_type::array)
      throw usage_error(str("synth: pad_vocabulary: ", key, " is a ", gguf::value_type_name(v.type()), ", not an array"));
    std::vector<meta_value> elements = v.elements();
    const std::uint64_t first = elements.size();
    for (std::uint64_t i = 0; i < count; ++i) elements.push_back(make(v.element_type(), first + i));
    v = meta_value::array(v.element_type(), std::move(elements));
  }
}

}  // namespace

const meta_value* vocabulary::find(std::string_view key) const {
  for (const auto& [k, v] : keys)
    if (k == key) return &v;
  return nullptr;
}

meta_value to_meta_value(const gguf::value& v) {
  if (!v.is_array()) return scalar_to_meta(v);
  std::vector<meta_value> elements;
  elements.reserve(v.size());
  if (v.element_type() == value_type::string) {
    for (const std::string_view s : v.strings()) elements.push_back(meta_value::string(std::string(s)));
  } else if (v.element_type() == value_type::array) {
    for (const gguf::value& a : v.arrays()) elements.push_back(to_meta_value(a));
  } else {
    for (std::uint64_t i = 0; i < v.size(); ++i) elements.push_back(scalar_to_meta(v.element(i)));
  }
  return meta_value::array(v.element_type(), std::move(elements));
}

vocabulary copy_vocabulary(const gguf::file& source) {
  const auto tokens = source.find_string_array(tokens_key);
  if (!tokens)
    throw usage_error(str("synth: copy_vocabulary: ", source.name(), " has no ", tokens_key,
                          " string array (is it a model or vocabulary GGUF?)"));
  vocabulary vocab;
  vocab.token_count = tokens->size();
  for (const auto& entry : source.metadata())
    if (entry.key.starts_with("tokenizer.")) vocab.keys.emplace_back(std::string(entry.key), to_meta_value(entry.val));
  return vocab;
}

void pad_vocabulary(vocabulary& vocab, std::uint64_t size) {
  if (size < vocab.token_count)
    throw usage_error(str("synth: pad_vocabulary: cannot pad a vocabulary of ", vocab.token_count,
                          " tokens down to ", size));
  const std::uint64_t extra = size - vocab.token_count;
  if (extra == 0) return;
  extend_array(vocab, tokens_key, extra,
               [](value_type, std::uint64_t id) { return meta_value::string(str("[PAD", id, "]")); });
  extend_array(vocab, "tokenizer.ggml.token_type", extra,
               [](value_type t, std::uint64_t) { return number_of_type(t, unused_token_type); });
  extend_array(vocab, "tokenizer.ggml.scores", extra, [](value_type t, std::uint64_t) { return number_of_type(t, 0); });
  vocab.token_count = size;
}

}  // namespace tg::synth
