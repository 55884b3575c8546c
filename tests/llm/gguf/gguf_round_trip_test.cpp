// gguf_round_trip_test.cpp: what the writer writes, the reader reads back unchanged.
#include <doctest/doctest.h>

#include <bit>
#include <limits>
#include <string>
#include <vector>

#include "llm/gguf/gguf_file.hpp"
#include "llm/gguf/gguf_writer.hpp"
#include "tests/llm/gguf/gguf_test_util.hpp"

namespace tg::gguf {
namespace {

// Deep comparison of what was written with what was read.
bool same(const value& got, const meta_value& want) {
  if (got.type() != want.type()) return false;
  if (want.type() == value_type::string) return got.to_string() == want.text();
  if (want.type() != value_type::array) return got.bits() == want.bits();
  if (got.element_type() != want.element_type() || got.size() != want.elements().size()) return false;
  for (std::size_t i = 0; i < want.elements().size(); ++i)
    if (!same(got.element(i), want.elements()[i])) return false;
  return true;
}

std::vector<std::pair<std::string, meta_value>> every_kind_of_value() {
  using mv = meta_value;
  std::vector<std::pair<std::string, meta_value>> kv;
  kv.emplace_back("t.u8", mv::u8(200));
  kv.emplace_back("t.i8", mv::i8(-100));
  kv.emplace_back("t.u16", mv::u16(60000));
  kv.emplace_back("t.i16", mv::i16(-30000));
  kv.emplace_back("t.u32", mv::u32(4000000000u));
  kv.emplace_back("t.i32", mv::i32(-2000000000));
  kv.emplace_back("t.f32", mv::f32(-1.25e-7f));
  kv.emplace_back("t.f32_nan", mv::f32(std::numeric_limits<float>::quiet_NaN()));
  kv.emplace_back("t.bool_true", mv::boolean(true));
  kv.emplace_back("t.bool_false", mv::boolean(false));
  kv.emplace_back("t.string", mv::string("h\xc3\xa9llo, \xe4\xb8\x96\xe7\x95\x8c"));
  kv.emplace_back("t.empty_string", mv::string(""));
  kv.emplace_back("t.u64", mv::u64(std::numeric_limits<std::uint64_t>::max()));
  kv.emplace_back("t.i64", mv::i64(std::numeric_limits<std::int64_t>::min()));
  kv.emplace_back("t.f64", mv::f64(3.141592653589793));
  kv.emplace_back("t.array_u8", mv::array(value_type::u8, {mv::u8(0), mv::u8(255)}));
  kv.emplace_back("t.array_i8", mv::array(value_type::i8, {mv::i8(-128), mv::i8(127)}));
  kv.emplace_back("t.array_u16", mv::array(value_type::u16, {mv::u16(1), mv::u16(65535)}));
  kv.emplace_back("t.array_i16", mv::array(value_type::i16, {mv::i16(-32768)}));
  kv.emplace_back("t.array_u32", mv::array(value_type::u32, {mv::u32(7), mv::u32(8), mv::u32(9)}));
  kv.emplace_back("t.array_i32", mv::array(value_type::i32, {mv::i32(-1)}));
  kv.emplace_back("t.array_f32", mv::array(value_type::f32, {mv::f32(0.5f), mv::f32(-0.0f)}));
  kv.emplace_back("t.array_bool", mv::array(value_type::boolean, {mv::boolean(true), mv::boolean(false)}));
  kv.emplace_back("t.array_string", mv::array(value_type::string, {mv::string("a b"), mv::string("")}));
  kv.emplace_back("t.array_u64", mv::array(value_type::u64, {mv::u64(1ull << 63)}));
  kv.emplace_back("t.array_i64", mv::array(value_type::i64, {mv::i64(-5), mv::i64(5)}));
  kv.emplace_back("t.array_f64", mv::array(value_type::f64, {mv::f64(1e300)}));
  kv.emplace_back("t.array_empty", mv::array(value_type::f32, {}));
  kv.emplace_back("t.array_nested",
                  mv::array(value_type::array,
                            {mv::array(value_type::string, {mv::string("x"), mv::string("yz")}),
                             mv::array(value_type::u16, {mv::u16(3)}),
                             mv::array(value_type::array, {mv::array(value_type::i8, {mv::i8(-2)})})}));
  return kv;
}

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (const int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

}  // namespace

TEST_CASE("every metadata type survives a write and read") {
  const auto kv = every_kind_of_value();
  writer w;
  for (const auto& [key, v] : kv) w.add(key, v);
  const std::vector<std::byte> bytes = w.to_bytes();
  const file f = file::from_memory(bytes, "round-trip.gguf");
  CHECK(f.version() == 3);
  REQUIRE(f.metadata().size() == kv.size());
  for (std::size_t i = 0; i < kv.size(); ++i) {
    CAPTURE(kv[i].first);
    CHECK(f.metadata()[i].key == kv[i].first);
    CHECK(same(f.metadata()[i].val, kv[i].second));
    REQUIRE(f.find(kv[i].first) != nullptr);
    CHECK(same(*f.find(kv[i].first), kv[i].second));
  }
  CHECK(f.tensors().empty());
  CHECK(f.bytes().size() == bytes.size());  // no tensors: no padding after the metadata
}

TEST_CASE("tensors come back with their shape, type, offset and exact bytes") {
  writer w(64);
  std::vector<std::byte> q4(2 * 3 * 18), f16(5 * 2), bf16(2 * 2), f32(3 * 4);
  for (std::size_t i = 0; i < q4.size(); ++i) q4[i] = static_cast<std::byte>(i);
  for (std::size_t i = 0; i < f16.size(); ++i) f16[i] = static_cast<std::byte>(255 - i);
  w.add_tensor("q", tensor_type::q4_0, {64, 3}, q4);
  w.add_tensor("h", tensor_type::f16, {5}, f16);
  w.add_tensor("b", tensor_type::bf16, {1, 1, 1, 2}, bf16);
  w.add_tensor("s", tensor_type::f32, {3, 1, 1}, f32);
  const std::vector<std::byte> bytes = w.to_bytes();
  const file f = file::from_memory(bytes, "tensors.gguf");
  CHECK(f.alignment() == 64);
  CHECK(f.get_u32("general.alignment") == 64);
  CHECK(f.data_offset() % 64 == 0);
  REQUIRE(f.tensors().size() == 4);

  const tensor_info& q = f.get_tensor("q");
  CHECK(q.type == tensor_type::q4_0);
  CHECK(q.n_dims == 2);
  CHECK(q.ne == std::array<std::uint64_t, 4>{64, 3, 1, 1});
  CHECK(q.offset == 0);
  CHECK(q.size_bytes == q4.size());
  CHECK(q.row_count() == 3);
  CHECK(q.row_size_bytes() == 36);
  CHECK(q.element_count() == 192);
  const auto qb = f.tensor_bytes(q);
  CHECK(std::equal(qb.begin(), qb.end(), q4.begin(), q4.end()));
  CHECK(f.tensor_data(q) == f.bytes().data() + f.data_offset());  // a view, not a copy

  const tensor_info& h = f.get_tensor("h");
  CHECK(h.offset == 128);  // 108 bytes of q, padded to 64
  CHECK(h.n_dims == 1);
  const auto hb = f.tensor_bytes(h);
  CHECK(std::equal(hb.begin(), hb.end(), f16.begin(), f16.end()));
  CHECK(f.get_tensor("b").n_dims == 4);
  CHECK(f.get_tensor("b").ne[3] == 2);
  CHECK(f.get_tensor("s").type == tensor_type::f32);
  CHECK(f.tensors()[0].name == "q");
  CHECK(f.tensors()[3].name == "s");
  CHECK(f.find_tensor("absent") == nullptr);
}

TEST_CASE("a file written to disk opens through the memory mapping") {
  test::temp_dir dir;
  test::sample_writer().write_file(dir / "sample.gguf");
  const file f = file::open(dir / "sample.gguf");
  CHECK(f.name() == (dir / "sample.gguf").string());
  CHECK(f.get_string("general.architecture") == "llama");
  const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  REQUIRE(tokens.size() == 4);
  CHECK(tokens[1] == "<s>");
  // The views point into the mapping, not into copies.
  CHECK(tokens[1].data() > reinterpret_cast<const char*>(f.bytes().data()));
  CHECK(tokens[1].data() < reinterpret_cast<const char*>(f.bytes().data() + f.bytes().size()));
  const auto& a = f.get_tensor("a.weight");
  float first[2] = {};
  std::memcpy(first, f.tensor_data(a) + 4, sizeof first);
  CHECK(first[0] == 0.25f);
  CHECK(first[1] == 0.5f);
}

TEST_CASE("views stay valid when the file object is moved") {
  const std::vector<std::byte> bytes = test::sample_file();
  file f = file::from_memory(bytes, "moved.gguf");
  const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  const tensor_info* a = f.find_tensor("a.weight");
  file g = std::move(f);
  CHECK(g.get_string_array("tokenizer.ggml.tokens").data() == tokens.data());
  CHECK(g.find_tensor("a.weight") == a);
  CHECK(g.tensor_data(*a) == g.bytes().data() + g.data_offset());
}

TEST_CASE("version 2 files read like version 3") {
  std::vector<std::byte> bytes = test::sample_file();
  test::put_le(bytes, 4, 2, 4);
  const file f = file::from_memory(bytes, "v2.gguf");
  CHECK(f.version() == 2);
  CHECK(f.get_u32("llama.block_count") == 4);
  CHECK(f.tensors().size() == 2);
}

TEST_CASE("the writer pads each tensor to the alignment and writes the default alignment implicitly") {
  const std::vector<std::byte> bytes = test::sample_file();
  const file f = file::from_memory(bytes, "sample.gguf");
  CHECK(f.alignment() == 32);
  CHECK(f.find("general.alignment") == nullptr);
  CHECK(f.get_tensor("b.weight").offset == 64);
  CHECK(bytes.size() == f.data_offset() + 160);  // 64 + 68 bytes, padded to 32
}

TEST_CASE("the writer rejects data of the wrong size, duplicate names and the alignment key") {
  writer w;
  CHECK_THROWS_WITH_AS(w.add_tensor("x", tensor_type::q8_0, {32, 2}, bytes_of({1, 2, 3})),
                       "gguf writer: add_tensor 'x': 3 bytes of data, expected 68 for its shape and type Q8_0",
                       usage_error);
  CHECK_THROWS_WITH_AS(w.add_tensor("x", tensor_type::q8_0, {30}, bytes_of({})),
                       "row_size_bytes: a row of 30 Q8_0 values is not a whole number of 32-value blocks",
                       usage_error);
  w.add("k", meta_value::u8(1));
  CHECK_THROWS_WITH_AS(w.add("k", meta_value::u8(2)), "gguf writer: add: key 'k' was already added", usage_error);
  CHECK_THROWS_AS(w.add("general.alignment", meta_value::u32(64)), usage_error);
  CHECK_THROWS_WITH_AS(meta_value::array(value_type::u8, {meta_value::u16(1)}),
                       "meta_value::array: element 0 is a uint16, but the array holds uint8", usage_error);
  CHECK_THROWS_AS(writer(48), usage_error);
}

}  // namespace tg::gguf
