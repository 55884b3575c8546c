// gguf_writer.cpp: serializes metadata and tensors in the GGUF v3 layout (ggml/docs/gguf.md).
#include "llm/gguf/gguf_writer.hpp"

#include <bit>
#include <fstream>
#include <utility>

#include <tg/core/error.hpp>

#include "llm/gguf/quote.hpp"

namespace tg::gguf {

namespace {

constexpr std::uint32_t gguf_magic = 0x46554747;  // "GGUF" as a little-endian uint32
constexpr std::uint32_t written_version = 3;
constexpr std::uint32_t gguf_default_alignment = 32;

std::uint64_t round_up(std::uint64_t n, std::uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

void put_le(std::vector<std::byte>& out, std::uint64_t v, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out.push_back(static_cast<std::byte>(v >> (8 * i)));
}

void put_string(std::vector<std::byte>& out, std::string_view s) {
  put_le(out, s.size(), 8);
  for (const char c : s) out.push_back(static_cast<std::byte>(c));
}

void put_value(std::vector<std::byte>& out, const meta_value& v, bool with_type) {
  if (with_type) put_le(out, static_cast<std::uint32_t>(v.type()), 4);
  if (v.type() == value_type::string) return put_string(out, v.text());
  if (v.type() != value_type::array) return put_le(out, v.bits(), scalar_size_bytes(v.type()));
  put_le(out, static_cast<std::uint32_t>(v.element_type()), 4);
  put_le(out, v.elements().size(), 8);
  // Array elements carry no type of their own; nested arrays keep their element type and count.
  for (const meta_value& e : v.elements()) put_value(out, e, false);
}

}  // namespace

meta_value meta_value::scalar(value_type type, std::uint64_t bits) {
  meta_value v;
  v.type_ = type;
  v.bits_ = bits;
  return v;
}

meta_value meta_value::u8(std::uint8_t v) { return scalar(value_type::u8, v); }
meta_value meta_value::i8(std::int8_t v) { return scalar(value_type::i8, static_cast<std::uint8_t>(v)); }
meta_value meta_value::u16(std::uint16_t v) { return scalar(value_type::u16, v); }
meta_value meta_value::i16(std::int16_t v) { return scalar(value_type::i16, static_cast<std::uint16_t>(v)); }
meta_value meta_value::u32(std::uint32_t v) { return scalar(value_type::u32, v); }
meta_value meta_value::i32(std::int32_t v) { return scalar(value_type::i32, static_cast<std::uint32_t>(v)); }
meta_value meta_value::f32(float v) { return scalar(value_type::f32, std::bit_cast<std::uint32_t>(v)); }
meta_value meta_value::boolean(bool v) { return scalar(value_type::boolean, v ? 1 : 0); }
meta_value meta_value::u64(std::uint64_t v) { return scalar(value_type::u64, v); }
meta_value meta_value::i64(std::int64_t v) { return scalar(value_type::i64, static_cast<std::uint64_t>(v)); }
meta_value meta_value::f64(double v) { return scalar(value_type::f64, std::bit_cast<std::uint64_t>(v)); }

meta_value meta_value::string(std::string v) {
  meta_value m;
  m.type_ = value_type::string;
  m.text_ = std::move(v);
  return m;
}

meta_value meta_value::array(value_type element_type, std::vector<meta_value> elements) {
  for (std::size_t i = 0; i < elements.size(); ++i)
    if (elements[i].type() != element_type)
      throw usage_error(str("meta_value::array: element ", i, " is a ", value_type_name(elements[i].type()),
                            ", but the array holds ", value_type_name(element_type)));
  meta_value m;
  m.type_ = value_type::array;
  m.element_type_ = element_type;
  m.elements_ = std::move(elements);
  return m;
}

meta_value meta_value::string_array(std::span<const std::string> items) {
  std::vector<meta_value> elements;
  elements.reserve(items.size());
  for (const auto& s : items) elements.push_back(string(s));
  return array(value_type::string, std::move(elements));
}

meta_value meta_value::f32_array(std::span<const float> items) {
  std::vector<meta_value> elements;
  elements.reserve(items.size());
  for (const float f : items) elements.push_back(f32(f));
  return array(value_type::f32, std::move(elements));
}

meta_value meta_value::i32_array(std::span<const std::int32_t> items) {
  std::vector<meta_value> elements;
  elements.reserve(items.size());
  for (const std::int32_t i : items) elements.push_back(i32(i));
  return array(value_type::i32, std::move(elements));
}

writer::writer(std::uint32_t alignment) : alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw usage_error(str("gguf writer: alignment ", alignment, " is not a power of two"));
  if (alignment != gguf_default_alignment) metadata_.emplace_back("general.alignment", meta_value::u32(alignment));
}

bool writer::has_key(std::string_view key) const {
  for (const auto& [k, v] : metadata_)
    if (k == key) return true;
  return false;
}

void writer::add(std::string key, meta_value v) {
  if (key == "general.alignment")
    throw usage_error("gguf writer: add(\"general.alignment\"): pass the alignment to the writer's constructor");
  if (has_key(key)) throw usage_error(str("gguf writer: add: key ", quote(key), " was already added"));
  metadata_.emplace_back(std::move(key), std::move(v));
}

void writer::add_tensor(std::string name, tensor_type type, std::vector<std::uint64_t> ne,
                        std::span<const std::byte> data) {
  if (ne.size() > 4)
    throw usage_error(str("gguf writer: add_tensor ", quote(name), ": ", ne.size(), " dimensions, at most 4"));
  for (const auto& t : tensors_)
    if (t.name == name) throw usage_error(str("gguf writer: add_tensor: tensor ", quote(name), " was already added"));
  std::uint64_t rows = 1;
  for (std::size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
  const std::uint64_t expected = row_size_bytes(type, ne.empty() ? 1 : ne[0]) * rows;
  if (data.size() != expected)
    throw usage_error(str("gguf writer: add_tensor ", quote(name), ": ", data.size(), " bytes of data, expected ",
                          expected, " for its shape and type ", tensor_type_name(type)));
  const std::uint64_t offset = data_size_;
  data_size_ = round_up(offset + data.size(), alignment_);
  tensors_.push_back({std::move(name), type, std::move(ne), {data.begin(), data.end()}, offset});
}

std::vector<std::byte> writer::to_bytes() const {
  std::vector<std::byte> out;
  put_le(out, gguf_magic, 4);
  put_le(out, written_version, 4);
  put_le(out, tensors_.size(), 8);
  put_le(out, metadata_.size(), 8);
  for (const auto& [key, v] : metadata_) {
    put_string(out, key);
    put_value(out, v, true);
  }
  for (const auto& t : tensors_) {
    put_string(out, t.name);
    put_le(out, t.ne.size(), 4);
    for (const std::uint64_t n : t.ne) put_le(out, n, 8);
    put_le(out, static_cast<std::uint32_t>(t.type), 4);
    put_le(out, t.offset, 8);
  }
  // A file without tensors ends here, like llama.cpp's vocabulary-only files.
  if (tensors_.empty()) return out;
  out.resize(round_up(out.size(), alignment_));
  const std::size_t data_start = out.size();
  out.reserve(data_start + data_size_);
  for (const auto& t : tensors_) {
    out.resize(data_start + t.offset);
    out.insert(out.end(), t.data.begin(), t.data.end());
  }
  out.resize(data_start + data_size_);
  return out;
}

void writer::write_file(const std::filesystem::path& path) const {
  const std::vector<std::byte> bytes = to_bytes();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw usage_error(str("gguf writer: cannot write ", path.string()));
}

}  // namespace tg::gguf
