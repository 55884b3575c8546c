// gguf_writer.hpp: builds GGUF version 3 files: metadata of every type, tensors, alignment.
//
// Used by tests (round trips, corrupt-file cases) and to make synthetic models.
//
//   tg::gguf::writer w;
//   w.add("general.architecture", tg::gguf::meta_value::string("llama"));
//   w.add("llama.block_count", tg::gguf::meta_value::u32(4));
//   w.add_tensor("output_norm.weight", tg::gguf::tensor_type::f32, {256}, bytes);
//   w.write_file("tiny.gguf");
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llm/gguf/tensor_type.hpp"
#include "llm/gguf/value.hpp"

namespace tg::gguf {

// A metadata value owned by the writer: a scalar, a string, or an array of values that all
// have the array's element type.
class meta_value {
 public:
  static meta_value u8(std::uint8_t v);
  static meta_value i8(std::int8_t v);
  static meta_value u16(std::uint16_t v);
  static meta_value i16(std::int16_t v);
  static meta_value u32(std::uint32_t v);
  static meta_value i32(std::int32_t v);
  static meta_value f32(float v);
  static meta_value boolean(bool v);
  static meta_value string(std::string v);
  static meta_value u64(std::uint64_t v);
  static meta_value i64(std::int64_t v);
  static meta_value f64(double v);
  // Throws usage_error when an element's type is not `element_type`.
  static meta_value array(value_type element_type, std::vector<meta_value> elements);
  static meta_value string_array(std::span<const std::string> items);
  static meta_value f32_array(std::span<const float> items);
  static meta_value i32_array(std::span<const std::int32_t> items);

  value_type type() const { return type_; }
  value_type element_type() const { return element_type_; }
  std::uint64_t bits() const { return bits_; }  // scalars: little-endian bytes, zero-extended
  const std::string& text() const { return text_; }
  const std::vector<meta_value>& elements() const { return elements_; }

 private:
  static meta_value scalar(value_type type, std::uint64_t bits);
  value_type type_ = value_type::u8;
  value_type element_type_ = value_type::u8;
  std::uint64_t bits_ = 0;
  std::string text_;
  std::vector<meta_value> elements_;
};

class writer {
 public:
  // An alignment other than the default 32 is written as the first key, general.alignment.
  explicit writer(std::uint32_t alignment = 32);

  // Throws usage_error for a duplicate key (or general.alignment, which the constructor sets).
  void add(std::string key, meta_value v);
  // `ne[0]` is the innermost dimension. Copies `data`, which must be exactly the tensor's size.
  void add_tensor(std::string name, tensor_type type, std::vector<std::uint64_t> ne,
                  std::span<const std::byte> data);

  std::vector<std::byte> to_bytes() const;
  void write_file(const std::filesystem::path& path) const;

 private:
  struct tensor {
    std::string name;
    tensor_type type;
    std::vector<std::uint64_t> ne;
    std::vector<std::byte> data;
    std::uint64_t offset;  // from the start of the data section
  };
  bool has_key(std::string_view key) const;

  std::uint32_t alignment_;
  std::vector<std::pair<std::string, meta_value>> metadata_;
  std::vector<tensor> tensors_;
  std::uint64_t data_size_ = 0;  // the data section so far, each tensor padded to the alignment
};

}  // namespace tg::gguf
