// gguf_corrupt_test.cpp: malformed files are rejected with messages naming the field and offset.
//
// Each case writes a valid file with the writer, then truncates or patches bytes.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "llm/gguf/gguf_file.hpp"
#include "llm/gguf/gguf_writer.hpp"
#include "tests/llm/gguf/gguf_test_util.hpp"

namespace tg::gguf {
namespace {

using test::find_tensor_fields;
using test::find_text;
using test::find_value_type_field;
using test::put_le;

file open_bad(const std::vector<std::byte>& bytes) { return file::from_memory(bytes, "bad.gguf"); }

// The message the reader gives for a problem at `at`.
template <class... Parts>
std::string bad(std::uint64_t at, const Parts&... parts) {
  return str("gguf: bad.gguf: at byte ", at, ": ", parts...);
}

}  // namespace

TEST_CASE("a file that is not GGUF is rejected by its magic") {
  auto bytes = test::sample_file();
  put_le(bytes, 0, 0x4c4d4747, 4);  // "GGML"
  CHECK_THROWS_WITH_AS(open_bad(bytes), bad(0, "the magic is 'GGML', expected 'GGUF' (not a GGUF file?)").c_str(),
                       usage_error);
}

TEST_CASE("versions other than 2 and 3 are rejected") {
  auto bytes = test::sample_file();
  SUBCASE("version 1 used 32-bit counts") {
    put_le(bytes, 4, 1, 4);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(4, "GGUF version 1 is not supported (it used 32-bit counts; convert the model again "
                                "with a current llama.cpp)").c_str(),
                         usage_error);
  }
  SUBCASE("a byte-swapped version looks huge") {
    put_le(bytes, 4, 0x03000000, 4);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(4, "GGUF version 50331648 is not supported (expected 2 or 3; a big-endian or corrupt "
                                "file?)").c_str(),
                         usage_error);
  }
}

TEST_CASE("every truncation of a valid file is a usage error, never a crash") {
  const auto bytes = test::sample_file();
  const file whole = file::from_memory(bytes, "whole.gguf");
  const tensor_info& last = whole.tensors().back();
  const std::size_t needed = whole.data_offset() + last.offset + last.size_bytes;
  for (std::size_t n = 0; n < needed; ++n) {
    CAPTURE(n);
    const std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    CHECK_THROWS_AS(open_bad(cut), usage_error);
  }
  // The padding after the last tensor is optional.
  const std::vector<std::byte> unpadded(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(needed));
  CHECK_NOTHROW(open_bad(unpadded));
}

TEST_CASE("truncation messages say which field was cut and how many bytes were missing") {
  auto bytes = test::sample_file();
  SUBCASE("in the magic") {
    bytes.resize(3);
    CHECK_THROWS_WITH_AS(open_bad(bytes), bad(0, "file ends in the magic (needs 4 bytes, 3 left; truncated file?)").c_str(),
                         usage_error);
  }
  SUBCASE("in a string of an array") {
    const std::size_t at = find_text(bytes, "</s>");
    bytes.resize(at + 1);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(at - 8, "an array element of key 'tokenizer.ggml.tokens' claims 4 bytes but only 1 are "
                                     "left in the file (truncated or corrupt file?)").c_str(),
                         usage_error);
  }
  SUBCASE("in a scalar value") {
    // Claim only the first two keys and no tensors, so the counts fit what is left.
    put_le(bytes, 8, 0, 8);
    put_le(bytes, 16, 2, 8);
    const std::size_t at = find_value_type_field(bytes, "llama.block_count") + 4;
    bytes.resize(at + 2);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(at, "file ends in the value of key 'llama.block_count' (needs 4 bytes, 2 left; "
                                 "truncated file?)").c_str(),
                         usage_error);
  }
  SUBCASE("in the tensor data") {
    const file whole = file::from_memory(bytes, "whole.gguf");
    const auto b = find_tensor_fields(bytes, "b.weight", 2);
    const std::uint64_t data = whole.data_offset();
    bytes.resize(data + 100);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(b.offset, "tensor 'b.weight' needs 68 bytes at offset 64 of the data section (byte ", data,
                             "), past the end of the file (", data + 100, " bytes; truncated file?)").c_str(),
                         usage_error);
  }
}

TEST_CASE("a truncated file on disk is reported with its path") {
  test::temp_dir dir;
  const auto path = dir / "cut.gguf";
  test::sample_writer().write_file(path);
  std::filesystem::resize_file(path, 30);
  CHECK_THROWS_WITH_AS(file::open(path),
                       str("gguf: ", path.string(), ": at byte 16: the metadata count is 8, but the 6 bytes left in the "
                           "file hold at most 0 (corrupt count?)").c_str(),
                       usage_error);
  CHECK_THROWS_WITH_AS(file::open(dir / "absent.gguf"),
                       str("gguf: cannot open ", (dir / "absent.gguf").string(), ": No such file or directory").c_str(),
                       usage_error);
}

TEST_CASE("tensor data outside the file is rejected") {
  auto bytes = test::sample_file();
  const auto b = find_tensor_fields(bytes, "b.weight", 2);
  put_le(bytes, b.offset, 1u << 20, 8);
  const std::uint64_t data = bytes.size() - 160;
  CHECK_THROWS_WITH_AS(open_bad(bytes),
                       bad(b.offset, "tensor 'b.weight' needs 68 bytes at offset 1048576 of the data section (byte ",
                           data, "), past the end of the file (", bytes.size(), " bytes; truncated file?)").c_str(),
                       usage_error);
}

TEST_CASE("tensors whose data overlap are rejected") {
  auto bytes = test::sample_file();
  const auto b = find_tensor_fields(bytes, "b.weight", 2);
  put_le(bytes, b.offset, 32, 8);
  CHECK_THROWS_WITH_AS(open_bad(bytes),
                       bad(b.offset, "the data of tensor 'b.weight' (offset 32, 68 bytes) overlaps tensor 'a.weight' "
                                     "(offset 0, 64 bytes)").c_str(),
                       usage_error);
}

TEST_CASE("a data offset off the alignment is rejected") {
  auto bytes = test::sample_file();
  const auto b = find_tensor_fields(bytes, "b.weight", 2);
  put_le(bytes, b.offset, 65, 8);
  CHECK_THROWS_WITH_AS(open_bad(bytes),
                       bad(b.offset, "the data offset 65 of tensor 'b.weight' is not a multiple of the alignment 32")
                           .c_str(),
                       usage_error);
}

TEST_CASE("unknown and layout-less tensor types are rejected by name") {
  auto bytes = test::sample_file();
  const auto a = find_tensor_fields(bytes, "a.weight", 2);
  SUBCASE("a removed id") {
    put_le(bytes, a.type, 4, 4);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(a.type, "tensor 'a.weight' has unknown tensor type id 4 (removed from ggml, or newer than "
                                     "tg?)").c_str(),
                         usage_error);
  }
  SUBCASE("a known type without a known block layout") {
    put_le(bytes, a.type, 16, 4);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(a.type, "tensor 'a.weight' has type IQ2_XXS, whose block layout tg does not know "
                                     "(unsupported tensor type)").c_str(),
                         usage_error);
  }
}

TEST_CASE("dimensions are checked for count, range, overflow and block size") {
  auto bytes = test::sample_file();
  const auto a = find_tensor_fields(bytes, "a.weight", 2);
  const auto b = find_tensor_fields(bytes, "b.weight", 2);
  SUBCASE("more than four dimensions") {
    put_le(bytes, a.n_dims, 5, 4);
    CHECK_THROWS_WITH_AS(open_bad(bytes), bad(a.n_dims, "tensor 'a.weight' has 5 dimensions, expected at most 4").c_str(),
                         usage_error);
  }
  SUBCASE("a dimension above INT64_MAX") {
    put_le(bytes, a.dims, 1ull << 63, 8);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(a.dims, "dimension 0 of tensor 'a.weight' is 9223372036854775808, more than INT64_MAX")
                             .c_str(),
                         usage_error);
  }
  SUBCASE("an element count that overflows") {
    put_le(bytes, a.dims, 1ull << 32, 8);
    put_le(bytes, a.dims + 8, 1ull << 32, 8);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(a.n_dims, "the dimensions of tensor 'a.weight' (4294967296 x 4294967296 x 1 x 1) multiply "
                                       "to more than INT64_MAX elements").c_str(),
                         usage_error);
  }
  SUBCASE("a byte size that overflows") {
    put_le(bytes, b.dims, (1ull << 63) - 32, 8);
    put_le(bytes, b.dims + 8, 1, 8);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(b.n_dims, "tensor 'b.weight' (9223372036854775776 x 1 x 1 x 1 Q8_0) takes more than "
                                       "INT64_MAX bytes").c_str(),
                         usage_error);
  }
  SUBCASE("rows that are not whole blocks") {
    put_le(bytes, b.dims, 16, 8);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(b.n_dims, "tensor 'b.weight' has rows of 16 Q8_0 values, not a multiple of the block size 32")
                             .c_str(),
                         usage_error);
  }
}

TEST_CASE("absurd counts are rejected before anything is allocated") {
  auto bytes = test::sample_file();
  SUBCASE("tensor count") {
    put_le(bytes, 8, 1ull << 60, 8);
    const std::uint64_t left = bytes.size() - 24;
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(8, "the tensor count is 1152921504606846976, but the ", left,
                             " bytes left in the file hold at most ", left / 24, " (corrupt count?)").c_str(),
                         usage_error);
  }
  SUBCASE("metadata count") {
    put_le(bytes, 16, ~0ull, 8);
    const std::uint64_t left = bytes.size() - 24;
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(16, "the metadata count is 18446744073709551615, but the ", left,
                             " bytes left in the file hold at most ", left / 13, " (corrupt count?)").c_str(),
                         usage_error);
  }
  SUBCASE("array length") {
    const std::size_t count_at = find_value_type_field(bytes, "tokenizer.ggml.tokens") + 8;
    put_le(bytes, count_at, 1ull << 62, 8);
    const std::uint64_t left = bytes.size() - count_at - 8;
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(count_at, "the array length of key 'tokenizer.ggml.tokens' is 4611686018427387904, but the ",
                             left, " bytes left in the file hold at most ", left / 8, " (corrupt count?)").c_str(),
                         usage_error);
  }
  SUBCASE("string length") {
    const std::size_t length_at = find_text(bytes, "llama") - 8;
    put_le(bytes, length_at, 1ull << 40, 8);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(length_at, "the string value of key 'general.architecture' claims 1099511627776 bytes but "
                                        "only ", bytes.size() - length_at - 8,
                             " are left in the file (truncated or corrupt file?)").c_str(),
                         usage_error);
  }
}

TEST_CASE("duplicate keys and duplicate tensor names are rejected") {
  auto bytes = test::sample_file();
  SUBCASE("keys") {
    const std::size_t first = find_text(bytes, "test.dup_a") - 8;
    const std::size_t second = find_text(bytes, "test.dup_b") - 8;
    bytes[second + 8 + 9] = std::byte{'a'};
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(second, "key 'test.dup_a' appears twice (first at byte ", first, ")").c_str(), usage_error);
  }
  SUBCASE("tensor names") {
    const auto a = find_tensor_fields(bytes, "a.weight", 2);
    const auto b = find_tensor_fields(bytes, "b.weight", 2);
    bytes[b.info + 8] = std::byte{'a'};
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(b.info, "tensor name 'a.weight' appears twice (first at byte ", a.info, ")").c_str(),
                         usage_error);
  }
}

TEST_CASE("bad value types and bool values are rejected") {
  auto bytes = test::sample_file();
  const std::size_t type_at = find_value_type_field(bytes, "test.flag");
  SUBCASE("value type") {
    put_le(bytes, type_at, 13, 4);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(type_at, "the value type of key 'test.flag' is 13, expected 0 to 12 (corrupt file?)").c_str(),
                         usage_error);
  }
  SUBCASE("array element type") {
    const std::size_t elem_at = find_value_type_field(bytes, "tokenizer.ggml.scores") + 4;
    put_le(bytes, elem_at, 99, 4);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(elem_at, "the array element type of key 'tokenizer.ggml.scores' is 99, expected 0 to 12 "
                                      "(corrupt file?)").c_str(),
                         usage_error);
  }
  SUBCASE("bool value") {
    put_le(bytes, type_at + 4, 2, 1);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(type_at + 4, "the bool value of key 'test.flag' is 2, expected 0 or 1").c_str(), usage_error);
  }
}

TEST_CASE("general.alignment must be a non-zero power of two") {
  auto bytes = test::sample_writer(64).to_bytes();
  const std::size_t value_at = find_value_type_field(bytes, "general.alignment") + 4;
  SUBCASE("48") {
    put_le(bytes, value_at, 48, 4);
    CHECK_THROWS_WITH_AS(open_bad(bytes),
                         bad(24, "general.alignment is uint32 48, expected a non-zero power of two that fits uint32")
                             .c_str(),
                         usage_error);
  }
  SUBCASE("0") {
    put_le(bytes, value_at, 0, 4);
    CHECK_THROWS_AS(open_bad(bytes), usage_error);
  }
}

TEST_CASE("arrays nested deeper than eight levels are rejected") {
  const auto nest = [](int levels) {
    meta_value v = meta_value::array(value_type::u8, {meta_value::u8(1)});
    for (int i = 0; i < levels; ++i) v = meta_value::array(value_type::array, {v});
    writer w;
    w.add("deep", v);
    return w.to_bytes();
  };
  CHECK_NOTHROW(open_bad(nest(8)));
  CHECK_THROWS_WITH_AS(open_bad(nest(9)), doctest::Contains("arrays of key 'deep' are nested more than 8 deep"),
                       usage_error);
}

TEST_CASE("names with control bytes are escaped in messages") {
  auto bytes = test::sample_file();
  const std::size_t key_at = find_text(bytes, "test.dup_a");
  bytes[key_at] = std::byte{'\n'};
  bytes[key_at + 1] = std::byte{0xff};
  put_le(bytes, key_at + 10, 13, 4);  // a bad value type, so the key is named in the error
  CHECK_THROWS_WITH_AS(open_bad(bytes), doctest::Contains("of key '\\x0a\\xffst.dup_a' is 13"), usage_error);
}

}  // namespace tg::gguf
