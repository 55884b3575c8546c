// gguf_parse.cpp: the bounds-checked GGUF parser behind gguf::file (layout: ggml/docs/gguf.md).
//
// Counts in the file are never trusted: before anything is sized by a count, the count is
// checked against the bytes left, using the least space one element can take. The metadata
// is walked twice: once to validate it and size the string and array pools exactly, once to
// fill them, so views into the pools never move.
#include "llm/gguf/file_parser.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <tg/core/error.hpp>

#include "llm/gguf/gguf_file.hpp"
#include "llm/gguf/little_endian.hpp"
#include "llm/gguf/quote.hpp"

namespace tg::gguf {

namespace {

constexpr std::uint32_t gguf_magic = 0x46554747;  // "GGUF" read as a little-endian uint32
constexpr std::uint64_t header_bytes = 24;        // magic, version, tensor count, kv count
constexpr std::uint64_t string_min_bytes = 8;     // the length of an empty string
constexpr std::uint64_t array_min_bytes = 4 + 8;  // element type and count of an empty array
constexpr std::uint64_t kv_min_bytes = string_min_bytes + 4 + 1;             // key, type, uint8
constexpr std::uint64_t tensor_info_min_bytes = string_min_bytes + 4 + 4 + 8;  // no dims
constexpr std::uint64_t max_i64 = std::numeric_limits<std::int64_t>::max();
// Arrays of arrays are legal but unused in practice; the cap keeps recursion shallow.
constexpr int max_array_depth = 8;

class parser {
 public:
  parser(std::span<const std::byte> bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  void read_header(std::uint32_t& version, std::uint64_t& tensor_count, std::uint64_t& kv_count);
  // With null pointers, the sizing pass: validates and counts pool slots, keeps nothing.
  void read_metadata(std::uint64_t kv_count, file_pools* pools, std::vector<metadata_entry>* out,
                     std::unordered_map<std::string_view, std::size_t>* index);
  std::uint32_t read_alignment(const std::vector<metadata_entry>& metadata,
                               const std::unordered_map<std::string_view, std::size_t>& index) const;
  void read_tensor_infos(std::uint64_t tensor_count, std::vector<tensor_info>& out,
                         std::unordered_map<std::string_view, std::size_t>& index,
                         std::vector<std::uint64_t>& offset_fields);
  std::uint64_t locate_data(std::uint32_t alignment, const std::vector<tensor_info>& tensors,
                            const std::vector<std::uint64_t>& offset_fields) const;

  std::uint64_t string_count() const { return strings_needed_; }
  std::uint64_t value_count() const { return values_needed_; }

 private:
  template <class... Parts>
  [[noreturn]] void fail(std::uint64_t at, const Parts&... parts) const {
    throw usage_error(str("gguf: ", name_, ": at byte ", at, ": ", parts...));
  }
  std::uint64_t left() const { return bytes_.size() - pos_; }
  std::string where() const { return subject_.empty() ? std::string() : " of " + subject_; }

  std::span<const std::byte> take(std::uint64_t n, std::string_view field);
  std::uint64_t read_uint(std::size_t n, std::string_view field);
  std::string_view read_string(std::string_view field);
  void check_count(std::uint64_t at, std::uint64_t count, std::uint64_t min_bytes_each,
                   std::string_view field) const;
  value_type read_value_type(std::string_view field);
  value read_value(value_type type, int depth);
  value read_array(int depth);

  std::span<const std::byte> bytes_;
  const std::string& name_;
  std::uint64_t pos_ = 0;
  std::string subject_;  // what is being read, for messages: "key 'general.name'"
  // Sizing pass: pool slots needed. Filling pass: the pools and the next free slots.
  std::uint64_t strings_needed_ = 0;
  std::uint64_t values_needed_ = 0;
  file_pools* pools_ = nullptr;
  std::size_t next_string_ = 0;
  std::size_t next_value_ = 0;
};

std::span<const std::byte> parser::take(std::uint64_t n, std::string_view field) {
  if (n > left())
    fail(pos_, "file ends in ", field, where(), " (needs ", n, " bytes, ", left(),
         " left; truncated file?)");
  const auto span = bytes_.subspan(pos_, n);
  pos_ += n;
  return span;
}

std::uint64_t parser::read_uint(std::size_t n, std::string_view field) { return load_le(take(n, field).data(), n); }

std::string_view parser::read_string(std::string_view field) {
  const std::uint64_t at = pos_;
  const std::uint64_t length = read_uint(8, field);
  if (length > left())
    fail(at, field, where(), " claims ", length, " bytes but only ", left(),
         " are left in the file (truncated or corrupt file?)");
  const auto chars = take(length, field);
  return {reinterpret_cast<const char*>(chars.data()), chars.size()};
}

void parser::check_count(std::uint64_t at, std::uint64_t count, std::uint64_t min_bytes_each,
                         std::string_view field) const {
  const std::uint64_t most = left() / min_bytes_each;
  if (count > most)
    fail(at, field, where(), " is ", count, ", but the ", left(), " bytes left in the file hold at most ",
         most, " (corrupt count?)");
}

value_type parser::read_value_type(std::string_view field) {
  const std::uint64_t at = pos_;
  const std::uint64_t id = read_uint(4, field);
  if (id >= value_type_count)
    fail(at, field, where(), " is ", id, ", expected 0 to ", value_type_count - 1, " (corrupt file?)");
  return static_cast<value_type>(id);
}

value parser::read_value(value_type type, int depth) {
  if (type == value_type::string) return value::string(read_string("the string value"));
  if (type == value_type::array) return read_array(depth);
  const std::uint64_t at = pos_;
  const std::uint64_t bits = read_uint(scalar_size_bytes(type), "the value");
  if (type == value_type::boolean && bits > 1)
    fail(at, "the bool value", where(), " is ", bits, ", expected 0 or 1");
  return value::scalar(type, bits);
}

value parser::read_array(int depth) {
  const std::uint64_t at = pos_;
  const value_type element = read_value_type("the array element type");
  const std::uint64_t count_at = pos_;
  const std::uint64_t count = read_uint(8, "the array length");
  if (const std::size_t size = scalar_size_bytes(element); size != 0) {
    check_count(count_at, count, size, "the array length");
    const std::uint64_t raw_at = pos_;
    const auto raw = take(count * size, "the array elements");
    if (element == value_type::boolean)
      for (std::size_t i = 0; i < raw.size(); ++i)
        if (std::to_integer<unsigned>(raw[i]) > 1)
          fail(raw_at + i, "bool element ", i, where(), " is ", std::to_integer<unsigned>(raw[i]),
               ", expected 0 or 1");
    return value::numeric_array(element, count, raw.data());
  }
  if (element == value_type::string) {
    check_count(count_at, count, string_min_bytes, "the array length");
    if (pools_ == nullptr) {
      for (std::uint64_t i = 0; i < count; ++i) read_string("an array element");
      strings_needed_ += count;
      return {};
    }
    const std::size_t first = next_string_;
    next_string_ += count;
    for (std::uint64_t i = 0; i < count; ++i) pools_->strings[first + i] = read_string("an array element");
    return value::string_array({pools_->strings.data() + first, count});
  }
  if (depth >= max_array_depth)
    fail(at, "arrays", where(), " are nested more than ", max_array_depth, " deep (corrupt file?)");
  check_count(count_at, count, array_min_bytes, "the array length");
  if (pools_ == nullptr) {
    for (std::uint64_t i = 0; i < count; ++i) read_array(depth + 1);
    values_needed_ += count;
    return {};
  }
  const std::size_t first = next_value_;
  next_value_ += count;
  for (std::uint64_t i = 0; i < count; ++i) pools_->values[first + i] = read_array(depth + 1);
  return value::array_of_arrays({pools_->values.data() + first, count});
}

void parser::read_header(std::uint32_t& version, std::uint64_t& tensor_count, std::uint64_t& kv_count) {
  pos_ = 0;
  const auto magic = take(4, "the magic");
  if (load_le(magic.data(), 4) != gguf_magic)
    fail(0, "the magic is ", quote({reinterpret_cast<const char*>(magic.data()), 4}),
         ", expected 'GGUF' (not a GGUF file?)");
  const std::uint64_t v = read_uint(4, "the version");
  if (v == 1)
    fail(4, "GGUF version 1 is not supported (it used 32-bit counts; convert the model again "
            "with a current llama.cpp)");
  if (v != 2 && v != 3)
    fail(4, "GGUF version ", v, " is not supported (expected 2 or 3; a big-endian or corrupt file?)");
  version = static_cast<std::uint32_t>(v);
  const std::uint64_t tensor_count_at = pos_;
  tensor_count = read_uint(8, "the tensor count");
  const std::uint64_t kv_count_at = pos_;
  kv_count = read_uint(8, "the metadata count");
  check_count(kv_count_at, kv_count, kv_min_bytes, "the metadata count");
  check_count(tensor_count_at, tensor_count, tensor_info_min_bytes, "the tensor count");
}

void parser::read_metadata(std::uint64_t kv_count, file_pools* pools, std::vector<metadata_entry>* out,
                           std::unordered_map<std::string_view, std::size_t>* index) {
  pos_ = header_bytes;
  pools_ = pools;
  next_string_ = next_value_ = 0;
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    const std::uint64_t at = pos_;
    subject_ = "metadata entry " + std::to_string(i);
    const std::string_view key = read_string("the key");
    subject_ = "key " + quote(key);
    const value v = read_value(read_value_type("the value type"), 0);
    if (out == nullptr) continue;
    const auto [it, fresh] = index->emplace(key, out->size());
    if (!fresh)
      fail(at, "key ", quote(key), " appears twice (first at byte ", (*out)[it->second].offset, ")");
    out->push_back({key, v, at});
  }
  subject_.clear();
}

std::uint32_t parser::read_alignment(const std::vector<metadata_entry>& metadata,
                                     const std::unordered_map<std::string_view, std::size_t>& index) const {
  const auto it = index.find("general.alignment");
  if (it == index.end()) return default_alignment;
  const metadata_entry& e = metadata[it->second];
  const auto a = e.val.to_u64();
  if (!a || *a == 0 || (*a & (*a - 1)) != 0 || *a > std::numeric_limits<std::uint32_t>::max())
    fail(e.offset, "general.alignment is ", describe(e.val),
         ", expected a non-zero power of two that fits uint32");
  return static_cast<std::uint32_t>(*a);
}

void parser::read_tensor_infos(std::uint64_t tensor_count, std::vector<tensor_info>& out,
                               std::unordered_map<std::string_view, std::size_t>& index,
                               std::vector<std::uint64_t>& offset_fields) {
  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    tensor_info t;
    t.info_offset = pos_;
    subject_ = "tensor info " + std::to_string(i);
    t.name = read_string("the tensor name");
    subject_ = "tensor " + quote(t.name);
    const std::uint64_t dims_at = pos_;
    const std::uint64_t n_dims = read_uint(4, "the dimension count");
    if (n_dims > max_dims) fail(dims_at, subject_, " has ", n_dims, " dimensions, expected at most ", max_dims);
    t.n_dims = static_cast<std::uint32_t>(n_dims);
    for (std::uint32_t d = 0; d < t.n_dims; ++d) {
      const std::uint64_t at = pos_;
      t.ne[d] = read_uint(8, "a dimension");
      if (t.ne[d] > max_i64) fail(at, "dimension ", d, where(), " is ", t.ne[d], ", more than INT64_MAX");
    }
    const std::uint64_t type_at = pos_;
    const std::uint64_t type_id = read_uint(4, "the tensor type");
    const tensor_type_traits* traits = find_tensor_type(static_cast<std::uint32_t>(type_id));
    if (traits == nullptr)
      fail(type_at, subject_, " has unknown tensor type id ", type_id,
           " (removed from ggml, or newer than tg?)");
    if (traits->block_bytes == 0)
      fail(type_at, subject_, " has type ", traits->name, ", whose block layout tg does not know "
           "(unsupported tensor type)");
    t.type = traits->type;
    offset_fields.push_back(pos_);
    t.offset = read_uint(8, "the data offset");

    const auto shape = [&] { return str(t.ne[0], " x ", t.ne[1], " x ", t.ne[2], " x ", t.ne[3]); };
    std::uint64_t elements = 1;
    for (const std::uint64_t n : t.ne)
      if (__builtin_mul_overflow(elements, n, &elements) || elements > max_i64)
        fail(dims_at, "the dimensions", where(), " (", shape(), ") multiply to more than INT64_MAX elements");
    if (t.ne[0] % traits->block_elems != 0)
      fail(dims_at, subject_, " has rows of ", t.ne[0], " ", traits->name,
           " values, not a multiple of the block size ", traits->block_elems);
    const std::uint64_t row_bytes = t.ne[0] / traits->block_elems * traits->block_bytes;
    if (__builtin_mul_overflow(row_bytes, t.row_count(), &t.size_bytes) || t.size_bytes > max_i64)
      fail(dims_at, subject_, " (", shape(), " ", traits->name, ") takes more than INT64_MAX bytes");

    const auto [it, fresh] = index.emplace(t.name, out.size());
    if (!fresh)
      fail(t.info_offset, "tensor name ", quote(t.name), " appears twice (first at byte ",
           out[it->second].info_offset, ")");
    out.push_back(t);
  }
  subject_.clear();
}

std::uint64_t parser::locate_data(std::uint32_t alignment, const std::vector<tensor_info>& tensors,
                                  const std::vector<std::uint64_t>& offset_fields) const {
  // pos_ <= file size < 2^63 and alignment <= 2^31, so this cannot overflow.
  const std::uint64_t data_start = (pos_ + alignment - 1) / alignment * alignment;
  if (tensors.empty()) return data_start;  // a vocabulary-only file may end without padding
  const std::uint64_t size = bytes_.size();
  if (data_start > size)
    fail(pos_, "the tensor data section starts at byte ", data_start, ", past the end of the file (",
         size, " bytes; truncated file?)");
  const std::uint64_t room = size - data_start;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const tensor_info& t = tensors[i];
    if (t.offset % alignment != 0)
      fail(offset_fields[i], "the data offset ", t.offset, " of tensor ", quote(t.name),
           " is not a multiple of the alignment ", alignment);
    if (t.offset > room || t.size_bytes > room - t.offset)
      fail(offset_fields[i], "tensor ", quote(t.name), " needs ", t.size_bytes, " bytes at offset ",
           t.offset, " of the data section (byte ", data_start, "), past the end of the file (", size,
           " bytes; truncated file?)");
  }
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::erase_if(order, [&](std::size_t i) { return tensors[i].size_bytes == 0; });
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return tensors[a].offset != tensors[b].offset ? tensors[a].offset < tensors[b].offset : a < b;
  });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const tensor_info& prev = tensors[order[k - 1]];
    const tensor_info& cur = tensors[order[k]];
    if (prev.offset + prev.size_bytes > cur.offset)
      fail(offset_fields[order[k]], "the data of tensor ", quote(cur.name), " (offset ", cur.offset, ", ",
           cur.size_bytes, " bytes) overlaps tensor ", quote(prev.name), " (offset ", prev.offset, ", ",
           prev.size_bytes, " bytes)");
  }
  return data_start;
}

}  // namespace

void file_parser::parse(file& f) {
  parser p(f.bytes_, f.name_);
  std::uint64_t tensor_count = 0, kv_count = 0;
  p.read_header(f.version_, tensor_count, kv_count);
  p.read_metadata(kv_count, nullptr, nullptr, nullptr);
  f.pools_.strings.resize(p.string_count());
  f.pools_.values.resize(p.value_count());
  p.read_metadata(kv_count, &f.pools_, &f.metadata_, &f.key_index_);
  f.alignment_ = p.read_alignment(f.metadata_, f.key_index_);
  std::vector<std::uint64_t> offset_fields;
  p.read_tensor_infos(tensor_count, f.tensors_, f.tensor_index_, offset_fields);
  f.data_offset_ = p.locate_data(f.alignment_, f.tensors_, offset_fields);
}

}  // namespace tg::gguf
