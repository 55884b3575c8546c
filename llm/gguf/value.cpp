// value.cpp: typed access to GGUF metadata values.
#include "llm/gguf/value.hpp"

#include <array>
#include <bit>
#include <limits>

#include <tg/core/error.hpp>

#include "llm/gguf/little_endian.hpp"
#include "llm/gguf/quote.hpp"

namespace tg::gguf {

namespace {

struct value_type_info {
  std::string_view name;
  std::size_t size_bytes;
};

constexpr std::array<value_type_info, value_type_count> value_types{{
    {"uint8", 1}, {"int8", 1}, {"uint16", 2}, {"int16", 2}, {"uint32", 4}, {"int32", 4},
    {"float32", 4}, {"bool", 1}, {"string", 0}, {"array", 0}, {"uint64", 8}, {"int64", 8},
    {"float64", 8},
}};

const value_type_info& info(value_type type) {
  const auto id = static_cast<std::uint32_t>(type);
  if (id >= value_type_count) TG_UNREACHABLE("value_type out of range");
  return value_types[id];
}

// Sign-extends the low `bytes` bytes of `bits`.
std::int64_t sign_extend(std::uint64_t bits, std::size_t bytes) {
  const unsigned shift = 64 - 8 * static_cast<unsigned>(bytes);
  return static_cast<std::int64_t>(bits << shift) >> shift;
}

bool is_signed(value_type type) {
  return type == value_type::i8 || type == value_type::i16 || type == value_type::i32 ||
         type == value_type::i64;
}

}  // namespace

std::string_view value_type_name(value_type type) { return info(type).name; }
std::size_t scalar_size_bytes(value_type type) { return info(type).size_bytes; }

bool is_integer(value_type type) {
  switch (type) {
    case value_type::u8: case value_type::i8: case value_type::u16: case value_type::i16:
    case value_type::u32: case value_type::i32: case value_type::u64: case value_type::i64:
      return true;
    default:
      return false;
  }
}

bool is_float(value_type type) { return type == value_type::f32 || type == value_type::f64; }

value value::scalar(value_type type, std::uint64_t bits) {
  value v;
  v.type_ = type;
  v.bits_ = bits;
  return v;
}

value value::string(std::string_view text) {
  value v;
  v.type_ = value_type::string;
  v.count_ = text.size();
  v.data_ = text.data();
  return v;
}

value value::numeric_array(value_type element_type, std::uint64_t count, const std::byte* raw) {
  value v;
  v.type_ = value_type::array;
  v.element_type_ = element_type;
  v.count_ = count;
  v.data_ = raw;
  return v;
}

value value::string_array(std::span<const std::string_view> items) {
  value v;
  v.type_ = value_type::array;
  v.element_type_ = value_type::string;
  v.count_ = items.size();
  v.data_ = items.data();
  return v;
}

value value::array_of_arrays(std::span<const value> items) {
  value v;
  v.type_ = value_type::array;
  v.element_type_ = value_type::array;
  v.count_ = items.size();
  v.data_ = items.data();
  return v;
}

std::optional<std::uint64_t> value::to_u64() const {
  if (!is_integer(type_)) return std::nullopt;
  if (!is_signed(type_)) return bits_;
  const std::int64_t v = sign_extend(bits_, scalar_size_bytes(type_));
  if (v < 0) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

std::optional<std::int64_t> value::to_i64() const {
  if (!is_integer(type_)) return std::nullopt;
  if (is_signed(type_)) return sign_extend(bits_, scalar_size_bytes(type_));
  if (bits_ > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return static_cast<std::int64_t>(bits_);
}

std::optional<double> value::to_f64() const {
  if (type_ == value_type::f32) return std::bit_cast<float>(static_cast<std::uint32_t>(bits_));
  if (type_ == value_type::f64) return std::bit_cast<double>(bits_);
  if (!is_integer(type_)) return std::nullopt;
  if (is_signed(type_)) return static_cast<double>(sign_extend(bits_, scalar_size_bytes(type_)));
  return static_cast<double>(bits_);
}

std::optional<bool> value::to_bool() const {
  if (type_ != value_type::boolean) return std::nullopt;
  return bits_ != 0;
}

std::optional<std::string_view> value::to_string() const {
  if (type_ != value_type::string) return std::nullopt;
  return std::string_view(static_cast<const char*>(data_), count_);
}

std::span<const std::string_view> value::strings() const {
  if (!is_array() || element_type_ != value_type::string) return {};
  return {static_cast<const std::string_view*>(data_), count_};
}

std::span<const value> value::arrays() const {
  if (!is_array() || element_type_ != value_type::array) return {};
  return {static_cast<const value*>(data_), count_};
}

std::span<const std::byte> value::raw_elements() const {
  if (!is_array() || scalar_size_bytes(element_type_) == 0) return {};
  return {static_cast<const std::byte*>(data_), count_ * scalar_size_bytes(element_type_)};
}

value value::element(std::uint64_t i) const {
  if (!is_array())
    throw usage_error(str("value::element: called on a ", value_type_name(type_), ", not an array"));
  if (i >= count_)
    throw usage_error(str("value::element: index ", i, " is past the end of an array of ", count_,
                          " elements"));
  if (element_type_ == value_type::string) return string(strings()[i]);
  if (element_type_ == value_type::array) return arrays()[i];
  const std::size_t size = scalar_size_bytes(element_type_);
  return scalar(element_type_, load_le(static_cast<const std::byte*>(data_) + i * size, size));
}

std::string describe(const value& v) {
  const std::string_view name = value_type_name(v.type());
  if (v.is_array()) return str("array of ", v.size(), " ", value_type_name(v.element_type()));
  if (auto s = v.to_string()) return str(name, " ", quote(*s));
  if (auto b = v.to_bool()) return str(name, " ", *b ? "true" : "false");
  if (is_float(v.type())) return str(name, " ", *v.to_f64());
  if (auto i = v.to_i64()) return str(name, " ", *i);
  return str(name, " ", v.bits());
}

}  // namespace tg::gguf
