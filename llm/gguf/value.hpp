// value.hpp: a GGUF metadata value as read from a file: a view into the file's bytes.
//
// Scalars hold their bits; strings and numeric arrays point into the mapped file; string
// arrays and arrays of arrays point into pools the owning gguf::file keeps. A value is valid
// for as long as the file it came from (moving the file keeps it valid).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tg::gguf {

// Value type ids as stored in the file (ggml/docs/gguf.md: gguf_metadata_value_type).
enum class value_type : std::uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
  string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};
inline constexpr std::uint32_t value_type_count = 13;

// "uint8", "int32", "float32", "bool", "string", "array", ...
std::string_view value_type_name(value_type type);
// Bytes one scalar of `type` takes in the file; 0 for string and array.
std::size_t scalar_size_bytes(value_type type);
bool is_integer(value_type type);
bool is_float(value_type type);

class value {
 public:
  value() = default;
  // A scalar of `type` whose little-endian bytes, zero-extended, are `bits`.
  static value scalar(value_type type, std::uint64_t bits);
  static value string(std::string_view text);
  // Arrays: `raw` holds `count` packed little-endian elements of a scalar type.
  static value numeric_array(value_type element_type, std::uint64_t count, const std::byte* raw);
  static value string_array(std::span<const std::string_view> items);
  static value array_of_arrays(std::span<const value> items);

  value_type type() const { return type_; }
  bool is_array() const { return type_ == value_type::array; }

  // Scalars, converted where no information is lost; nullopt when the value does not fit.
  std::optional<std::uint64_t> to_u64() const;  // any integer type, when >= 0
  std::optional<std::int64_t> to_i64() const;   // any integer type, when <= INT64_MAX
  std::optional<double> to_f64() const;         // any integer or float type
  std::optional<bool> to_bool() const;
  std::optional<std::string_view> to_string() const;
  // The stored bits of a scalar (little-endian bytes, zero-extended).
  std::uint64_t bits() const { return bits_; }

  // Arrays. element_type() and size() are meaningful only when is_array().
  value_type element_type() const { return element_type_; }
  std::uint64_t size() const { return is_array() ? count_ : 0; }
  std::span<const std::string_view> strings() const;  // empty unless an array of strings
  std::span<const value> arrays() const;               // empty unless an array of arrays
  std::span<const std::byte> raw_elements() const;     // empty unless an array of scalars
  // Element i of any array, as a value; i must be < size().
  value element(std::uint64_t i) const;

 private:
  value_type type_ = value_type::u8;
  value_type element_type_ = value_type::u8;
  std::uint64_t bits_ = 0;   // scalar bits
  std::uint64_t count_ = 0;  // string length or array element count
  const void* data_ = nullptr;  // chars, raw elements, string_view pool or value pool
};

// For messages: "uint32 7", "string 'llama'", "array of 32000 float32".
std::string describe(const value& v);

}  // namespace tg::gguf
