// gguf_test_util.hpp: helpers for GGUF tests: a small sample file, byte patching, temp dirs.
#pragma once
#include <unistd.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tg/core/error.hpp>

#include "llm/gguf/gguf_writer.hpp"

namespace tg::gguf::test {

inline std::vector<std::byte> f32_bytes(std::span<const float> values) {
  std::vector<std::byte> out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// A file with a little of everything: strings, a token list, scores, token types, a bool,
// two keys that differ in their last letter (for duplicate-key patches), an F32 tensor and a
// Q8_0 tensor.
inline writer sample_writer(std::uint32_t alignment = 32) {
  writer w(alignment);
  w.add("general.architecture", meta_value::string("llama"));
  w.add("llama.block_count", meta_value::u32(4));
  const std::vector<std::string> tokens{"<unk>", "<s>", "</s>", "a"};
  w.add("tokenizer.ggml.tokens", meta_value::string_array(tokens));
  const std::vector<float> scores{0.0f, 0.0f, 0.0f, -1.5f};
  w.add("tokenizer.ggml.scores", meta_value::f32_array(scores));
  const std::vector<std::int32_t> types{2, 3, 3, 1};
  w.add("tokenizer.ggml.token_type", meta_value::i32_array(types));
  w.add("test.flag", meta_value::boolean(true));
  w.add("test.dup_a", meta_value::u8(1));
  w.add("test.dup_b", meta_value::u8(2));
  std::vector<float> a(16);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.25f;
  w.add_tensor("a.weight", tensor_type::f32, {8, 2}, f32_bytes(a));
  std::vector<std::byte> b(68);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>(i * 7);
  w.add_tensor("b.weight", tensor_type::q8_0, {32, 2}, b);
  return w;
}

inline std::vector<std::byte> sample_file() { return sample_writer().to_bytes(); }

// Position of the first occurrence of `text` at or after `from`; throws when absent.
inline std::size_t find_text(const std::vector<std::byte>& bytes, std::string_view text, std::size_t from = 0) {
  const std::string_view all(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const std::size_t at = all.find(text, from);
  if (at == std::string_view::npos) throw std::logic_error(str("test file lacks '", text, "'"));
  return at;
}

inline void put_le(std::vector<std::byte>& bytes, std::size_t pos, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) bytes.at(pos + i) = static_cast<std::byte>(v >> (8 * i));
}

// Where the fields of a tensor info are, found from the tensor's name.
struct tensor_fields {
  std::size_t info, n_dims, dims, type, offset;
};

inline tensor_fields find_tensor_fields(const std::vector<std::byte>& bytes, std::string_view name,
                                        std::uint32_t n_dims) {
  // Skip the name's occurrences in metadata strings: the info's copy is preceded by its length.
  std::size_t at = find_text(bytes, name);
  while (std::to_integer<std::size_t>(bytes[at - 8]) != name.size()) at = find_text(bytes, name, at + 1);
  tensor_fields f{};
  f.info = at - 8;
  f.n_dims = at + name.size();
  f.dims = f.n_dims + 4;
  f.type = f.dims + 8 * n_dims;
  f.offset = f.type + 4;
  return f;
}

// Where key `key`'s value type field is: right after the key's text.
inline std::size_t find_value_type_field(const std::vector<std::byte>& bytes, std::string_view key) {
  return find_text(bytes, key) + key.size();
}

// A fresh directory under the system temp dir, removed with its contents at scope exit.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tg-gguf-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace tg::gguf::test
