// gguf_file.cpp: opening GGUF files and typed access to their metadata and tensors.
#include "llm/gguf/gguf_file.hpp"

#include <functional>
#include <limits>
#include <type_traits>
#include <utility>

#include <tg/core/error.hpp>

#include "llm/gguf/file_parser.hpp"
#include "llm/gguf/quote.hpp"

namespace tg::gguf {

file file::open(const std::filesystem::path& path) {
  file f;
  f.map_ = mapped_file(path);
  f.bytes_ = f.map_.bytes();
  f.name_ = path.string();
  file_parser::parse(f);
  return f;
}

file file::from_memory(std::span<const std::byte> bytes, std::string name) {
  file f;
  f.bytes_ = bytes;
  f.name_ = std::move(name);
  file_parser::parse(f);
  return f;
}

const metadata_entry* file::find_entry(std::string_view key) const {
  const auto it = key_index_.find(key);
  return it == key_index_.end() ? nullptr : &metadata_[it->second];
}

const value* file::find(std::string_view key) const {
  const metadata_entry* e = find_entry(key);
  return e == nullptr ? nullptr : &e->val;
}

const metadata_entry& file::require_entry(std::string_view key) const {
  const metadata_entry* e = find_entry(key);
  if (e == nullptr) throw usage_error(str("gguf: ", name_, ": required key ", quote(key), " is missing"));
  return *e;
}

void file::fail_conversion(const metadata_entry& e, const value& v, std::string_view expected,
                           std::optional<std::uint64_t> index) const {
  const std::string element = index ? str(" element ", *index) : std::string();
  throw usage_error(str("gguf: ", name_, ": at byte ", e.offset, ": key ", quote(e.key), element,
                        " is ", describe(v), ", expected ", expected));
}

namespace {

// What each getter accepts, for messages.
template <class T> constexpr std::string_view expectation = "";
template <> constexpr std::string_view expectation<std::string_view> = "a string";
template <> constexpr std::string_view expectation<bool> = "a bool";
template <> constexpr std::string_view expectation<std::uint32_t> = "an integer in the uint32 range";
template <> constexpr std::string_view expectation<std::uint64_t> = "an integer in the uint64 range";
template <> constexpr std::string_view expectation<std::int32_t> = "an integer in the int32 range";
template <> constexpr std::string_view expectation<std::int64_t> = "an integer in the int64 range";
template <> constexpr std::string_view expectation<float> = "a number";
template <> constexpr std::string_view expectation<double> = "a number";

template <class T>
std::optional<T> narrow(std::optional<std::int64_t> v) {
  if (!v || *v < std::numeric_limits<T>::min() || *v > std::numeric_limits<T>::max()) return std::nullopt;
  return static_cast<T>(*v);
}

template <class T>
std::optional<T> try_convert(const value& v) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return v.to_string();
  } else if constexpr (std::is_same_v<T, bool>) {
    return v.to_bool();
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    return v.to_u64();
  } else if constexpr (std::is_same_v<T, std::uint32_t>) {
    const auto u = v.to_u64();
    if (!u || *u > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
    return static_cast<std::uint32_t>(*u);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return v.to_i64();
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return narrow<std::int32_t>(v.to_i64());
  } else {
    static_assert(std::is_floating_point_v<T>);
    const auto d = v.to_f64();
    if (!d) return std::nullopt;
    return static_cast<T>(*d);
  }
}

}  // namespace

template <class T>
T file::convert(const metadata_entry& e, const value& v, std::optional<std::uint64_t> index) const {
  const std::optional<T> t = try_convert<T>(v);
  if (!t) fail_conversion(e, v, expectation<T>, index);
  return *t;
}

const value& file::require_array(const metadata_entry& e, bool of_strings) const {
  // Numeric arrays are checked element by element, so any element type passes here.
  if (!e.val.is_array() || (of_strings && e.val.element_type() != value_type::string))
    fail_conversion(e, e.val, of_strings ? "an array of strings" : "an array of numbers", std::nullopt);
  return e.val;
}

template <class T>
std::vector<T> file::convert_array(const metadata_entry& e) const {
  const value& a = require_array(e, false);
  std::vector<T> out;
  out.reserve(a.size());  // bounded by the file's size: the parser checked the count
  for (std::uint64_t i = 0; i < a.size(); ++i) out.push_back(convert<T>(e, a.element(i), i));
  return out;
}

std::string_view file::get_string(std::string_view key) const {
  const auto& e = require_entry(key);
  return convert<std::string_view>(e, e.val, std::nullopt);
}
std::uint32_t file::get_u32(std::string_view key) const {
  const auto& e = require_entry(key);
  return convert<std::uint32_t>(e, e.val, std::nullopt);
}
std::uint64_t file::get_u64(std::string_view key) const {
  const auto& e = require_entry(key);
  return convert<std::uint64_t>(e, e.val, std::nullopt);
}
std::int32_t file::get_i32(std::string_view key) const {
  const auto& e = require_entry(key);
  return convert<std::int32_t>(e, e.val, std::nullopt);
}
std::int64_t file::get_i64(std::string_view key) const {
  const auto& e = require_entry(key);
  return convert<std::int64_t>(e, e.val, std::nullopt);
}
float file::get_f32(std::string_view key) const {
  const auto& e = require_entry(key);
  return convert<float>(e, e.val, std::nullopt);
}
double file::get_f64(std::string_view key) const {
  const auto& e = require_entry(key);
  return convert<double>(e, e.val, std::nullopt);
}
bool file::get_bool(std::string_view key) const {
  const auto& e = require_entry(key);
  return convert<bool>(e, e.val, std::nullopt);
}

namespace {

// find_x(key) is get_x(key) when the key is present.
template <class Getter>
auto when_present(const file& f, std::string_view key, Getter get) -> std::optional<decltype(get(key))> {
  if (f.find(key) == nullptr) return std::nullopt;
  return get(key);
}

}  // namespace

std::optional<std::string_view> file::find_string(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_string(k); });
}
std::optional<std::uint32_t> file::find_u32(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_u32(k); });
}
std::optional<std::uint64_t> file::find_u64(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_u64(k); });
}
std::optional<std::int32_t> file::find_i32(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_i32(k); });
}
std::optional<std::int64_t> file::find_i64(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_i64(k); });
}
std::optional<float> file::find_f32(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_f32(k); });
}
std::optional<double> file::find_f64(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_f64(k); });
}
std::optional<bool> file::find_bool(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_bool(k); });
}

std::span<const std::string_view> file::get_string_array(std::string_view key) const {
  return require_array(require_entry(key), true).strings();
}
std::vector<float> file::get_f32_array(std::string_view key) const {
  return convert_array<float>(require_entry(key));
}
std::vector<std::int32_t> file::get_i32_array(std::string_view key) const {
  return convert_array<std::int32_t>(require_entry(key));
}
std::vector<std::uint32_t> file::get_u32_array(std::string_view key) const {
  return convert_array<std::uint32_t>(require_entry(key));
}
std::optional<std::span<const std::string_view>> file::find_string_array(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_string_array(k); });
}
std::optional<std::vector<float>> file::find_f32_array(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_f32_array(k); });
}
std::optional<std::vector<std::int32_t>> file::find_i32_array(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_i32_array(k); });
}
std::optional<std::vector<std::uint32_t>> file::find_u32_array(std::string_view key) const {
  return when_present(*this, key, [&](std::string_view k) { return get_u32_array(k); });
}

const tensor_info* file::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const tensor_info& file::get_tensor(std::string_view name) const {
  const tensor_info* t = find_tensor(name);
  if (t == nullptr) throw usage_error(str("gguf: ", name_, ": required tensor ", quote(name), " is missing"));
  return *t;
}

const std::byte* file::tensor_data(const tensor_info& t) const { return tensor_bytes(t).data(); }

std::span<const std::byte> file::tensor_bytes(const tensor_info& t) const {
  // std::less gives a total order even across unrelated objects.
  const std::less<const tensor_info*> before;
  if (before(&t, tensors_.data()) || !before(&t, tensors_.data() + tensors_.size()))
    throw usage_error(str("gguf: ", name_, ": tensor_data: tensor ", quote(t.name),
                          " does not belong to this file"));
  return bytes_.subspan(data_offset_ + t.offset, t.size_bytes);
}

}  // namespace tg::gguf
