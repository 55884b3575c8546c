// gguf_file.hpp: a GGUF file (versions 2 and 3) read in place: metadata, tensor infos, data.
//
// Nothing is copied: strings and tensor data are views into the memory mapping, and string
// arrays (150k-token vocabularies) are one pool of string_views. Every read is bounds-checked;
// a malformed file throws tg::usage_error naming the file, the field and its byte offset.
//
//   auto f = tg::gguf::file::open("model.gguf");
//   std::uint32_t layers = f.get_u32("llama.block_count");
//   auto tokens = f.get_string_array("tokenizer.ggml.tokens");
//   const auto& w = f.get_tensor("token_embd.weight");
//   const std::byte* bytes = f.tensor_data(w);
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "llm/gguf/mapped_file.hpp"
#include "llm/gguf/tensor_type.hpp"
#include "llm/gguf/value.hpp"

namespace tg::gguf {

inline constexpr std::uint32_t max_dims = 4;            // GGML_MAX_DIMS
inline constexpr std::uint32_t default_alignment = 32;  // when general.alignment is absent

struct metadata_entry {
  std::string_view key;
  value val;
  std::uint64_t offset = 0;  // byte offset of the entry in the file
};

struct tensor_info {
  std::string_view name;
  tensor_type type = tensor_type::f32;
  std::uint32_t n_dims = 0;
  std::array<std::uint64_t, max_dims> ne{1, 1, 1, 1};  // ne[0] is innermost; unused dims are 1
  std::uint64_t offset = 0;       // from the start of the data section
  std::uint64_t size_bytes = 0;
  std::uint64_t info_offset = 0;  // byte offset of this tensor's info in the file

  // The reader has checked that these products fit in int64.
  std::uint64_t element_count() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  std::uint64_t row_count() const { return ne[1] * ne[2] * ne[3]; }
  std::uint64_t row_size_bytes() const { return gguf::row_size_bytes(type, ne[0]); }
};

// Storage behind the values of string arrays and arrays of arrays, sized once per file.
struct file_pools {
  std::vector<std::string_view> strings;
  std::vector<value> values;
};

class file {
 public:
  static file open(const std::filesystem::path& path);
  // Reads a GGUF image already in memory, without copying it: `bytes` must outlive the file.
  // `name` is used in error messages.
  static file from_memory(std::span<const std::byte> bytes, std::string name);

  const std::string& name() const { return name_; }
  std::uint32_t version() const { return version_; }
  std::uint32_t alignment() const { return alignment_; }
  std::uint64_t data_offset() const { return data_offset_; }  // where the data section starts
  std::span<const std::byte> bytes() const { return bytes_; }

  // Metadata in file order, and lookup by key (nullptr when absent).
  std::span<const metadata_entry> metadata() const { return metadata_; }
  const value* find(std::string_view key) const;
  const metadata_entry* find_entry(std::string_view key) const;

  // Typed getters. get_* throw usage_error when the key is absent; find_* return nullopt then.
  // Both throw when the stored value cannot be converted without loss: integers widen or
  // narrow between widths and signedness when the value fits, floats accept any number.
  std::string_view get_string(std::string_view key) const;
  std::uint32_t get_u32(std::string_view key) const;
  std::uint64_t get_u64(std::string_view key) const;
  std::int32_t get_i32(std::string_view key) const;
  std::int64_t get_i64(std::string_view key) const;
  float get_f32(std::string_view key) const;
  double get_f64(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::optional<std::string_view> find_string(std::string_view key) const;
  std::optional<std::uint32_t> find_u32(std::string_view key) const;
  std::optional<std::uint64_t> find_u64(std::string_view key) const;
  std::optional<std::int32_t> find_i32(std::string_view key) const;
  std::optional<std::int64_t> find_i64(std::string_view key) const;
  std::optional<float> find_f32(std::string_view key) const;
  std::optional<double> find_f64(std::string_view key) const;
  std::optional<bool> find_bool(std::string_view key) const;

  // Arrays. String arrays are views into the file's pool (no copy); numeric arrays are
  // converted element by element with the same rules as the scalar getters.
  std::span<const std::string_view> get_string_array(std::string_view key) const;
  std::vector<float> get_f32_array(std::string_view key) const;
  std::vector<std::int32_t> get_i32_array(std::string_view key) const;
  std::vector<std::uint32_t> get_u32_array(std::string_view key) const;
  std::optional<std::span<const std::string_view>> find_string_array(std::string_view key) const;
  std::optional<std::vector<float>> find_f32_array(std::string_view key) const;
  std::optional<std::vector<std::int32_t>> find_i32_array(std::string_view key) const;
  std::optional<std::vector<std::uint32_t>> find_u32_array(std::string_view key) const;

  // Tensors in file order, lookup by name, and their bytes inside the mapping.
  std::span<const tensor_info> tensors() const { return tensors_; }
  const tensor_info* find_tensor(std::string_view name) const;
  const tensor_info& get_tensor(std::string_view name) const;  // throws when absent
  const std::byte* tensor_data(const tensor_info& t) const;
  std::span<const std::byte> tensor_bytes(const tensor_info& t) const;
  // Lets the pages of bytes inside the mapping go from this process's memory (mapped_file::release);
  // nothing for a file read from memory.
  void release(std::span<const std::byte> range) const { map_.release(range); }

 private:
  friend class file_parser;
  file() = default;
  const metadata_entry& require_entry(std::string_view key) const;
  const value& require_array(const metadata_entry& e, bool of_strings) const;
  [[noreturn]] void fail_conversion(const metadata_entry& e, const value& v,
                                    std::string_view expected, std::optional<std::uint64_t> index) const;
  template <class T>
  T convert(const metadata_entry& e, const value& v, std::optional<std::uint64_t> index) const;
  template <class T>
  std::vector<T> convert_array(const metadata_entry& e) const;

  mapped_file map_;  // empty for from_memory
  std::span<const std::byte> bytes_;
  std::string name_;
  std::uint32_t version_ = 0;
  std::uint32_t alignment_ = default_alignment;
  std::uint64_t data_offset_ = 0;
  file_pools pools_;
  std::vector<metadata_entry> metadata_;
  std::unordered_map<std::string_view, std::size_t> key_index_;
  std::vector<tensor_info> tensors_;
  std::unordered_map<std::string_view, std::size_t> tensor_index_;
};

}  // namespace tg::gguf
