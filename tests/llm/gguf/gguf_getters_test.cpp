// gguf_getters_test.cpp: typed metadata getters: widening, optional variants, clear errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "llm/gguf/gguf_file.hpp"
#include "llm/gguf/gguf_writer.hpp"
#include "tests/llm/gguf/gguf_test_util.hpp"

namespace tg::gguf {
namespace {

using mv = meta_value;

std::vector<std::byte> numbers_file() {
  writer w;
  w.add("n.u8", mv::u8(7));
  w.add("n.i32", mv::i32(12));
  w.add("n.neg", mv::i32(-3));
  w.add("n.u64_big", mv::u64(5000000000ull));
  w.add("n.f64", mv::f64(0.5));
  w.add("n.f32", mv::f32(1e-5f));
  w.add("n.str", mv::string("text"));
  w.add("n.flag", mv::boolean(false));
  w.add("n.u8s", mv::array(value_type::u8, {mv::u8(1), mv::u8(2)}));
  w.add("n.i64s", mv::array(value_type::i64, {mv::i64(1), mv::i64(3000000000ll)}));
  w.add("n.f64s", mv::array(value_type::f64, {mv::f64(0.25), mv::f64(-2)}));
  w.add("n.strs", mv::array(value_type::string, {mv::string("x")}));
  return w.to_bytes();
}

}  // namespace

TEST_CASE("integer getters accept any integer width whose value fits") {
  const auto bytes = numbers_file();
  const file f = file::from_memory(bytes, "n.gguf");
  CHECK(f.get_u32("n.u8") == 7);
  CHECK(f.get_u64("n.i32") == 12);
  CHECK(f.get_i32("n.neg") == -3);
  CHECK(f.get_i64("n.neg") == -3);
  CHECK(f.get_u64("n.u64_big") == 5000000000ull);
  CHECK(f.get_i64("n.u64_big") == 5000000000ll);
}

TEST_CASE("float getters accept floats of either width and integers") {
  const auto bytes = numbers_file();
  const file f = file::from_memory(bytes, "n.gguf");
  CHECK(f.get_f32("n.f64") == 0.5f);
  CHECK(f.get_f32("n.f32") == 1e-5f);
  CHECK(f.get_f64("n.f32") == static_cast<double>(1e-5f));
  CHECK(f.get_f32("n.i32") == 12.0f);
}

TEST_CASE("find variants return nothing for absent keys and the value for present ones") {
  const auto bytes = numbers_file();
  const file f = file::from_memory(bytes, "n.gguf");
  CHECK_FALSE(f.find_u32("n.absent").has_value());
  CHECK_FALSE(f.find_string("n.absent").has_value());
  CHECK_FALSE(f.find_f32_array("n.absent").has_value());
  CHECK_FALSE(f.find_string_array("n.absent").has_value());
  CHECK(f.find_u32("n.u8") == 7u);
  CHECK(f.find_string("n.str") == "text");
  CHECK(f.find_bool("n.flag") == false);
  CHECK(f.find_f32("n.f64") == 0.5f);
  REQUIRE(f.find_string_array("n.strs").has_value());
  CHECK(f.find_string_array("n.strs")->size() == 1);
}

TEST_CASE("a value that does not fit the getter's type names the key, the value and the expectation") {
  const auto bytes = numbers_file();
  const file f = file::from_memory(bytes, "n.gguf");
  const auto at = [&](std::string_view key) { return f.find_entry(key)->offset; };
  CHECK_THROWS_WITH_AS(f.get_u32("n.neg"),
                       str("gguf: n.gguf: at byte ", at("n.neg"),
                           ": key 'n.neg' is int32 -3, expected an integer in the uint32 range").c_str(),
                       usage_error);
  CHECK_THROWS_WITH_AS(f.get_u32("n.u64_big"),
                       str("gguf: n.gguf: at byte ", at("n.u64_big"),
                           ": key 'n.u64_big' is uint64 5000000000, expected an integer in the uint32 range").c_str(),
                       usage_error);
  CHECK_THROWS_WITH_AS(f.get_string("n.u8"),
                       str("gguf: n.gguf: at byte ", at("n.u8"), ": key 'n.u8' is uint8 7, expected a string").c_str(),
                       usage_error);
  CHECK_THROWS_WITH_AS(f.find_u32("n.str"),
                       str("gguf: n.gguf: at byte ", at("n.str"),
                           ": key 'n.str' is string 'text', expected an integer in the uint32 range").c_str(),
                       usage_error);
  CHECK_THROWS_AS(f.get_bool("n.u8"), usage_error);
  CHECK_THROWS_AS(f.get_f32("n.str"), usage_error);
}

TEST_CASE("a missing required key is reported by name") {
  const auto bytes = numbers_file();
  const file f = file::from_memory(bytes, "n.gguf");
  CHECK_THROWS_WITH_AS(f.get_u32("llama.block_count"),
                       "gguf: n.gguf: required key 'llama.block_count' is missing", usage_error);
  CHECK_THROWS_WITH_AS(f.get_tensor("output.weight"), "gguf: n.gguf: required tensor 'output.weight' is missing",
                       usage_error);
}

TEST_CASE("numeric array getters convert each element and name the one that does not fit") {
  const auto bytes = numbers_file();
  const file f = file::from_memory(bytes, "n.gguf");
  CHECK(f.get_i32_array("n.u8s") == std::vector<std::int32_t>{1, 2});
  CHECK(f.get_u32_array("n.u8s") == std::vector<std::uint32_t>{1, 2});
  CHECK(f.get_f32_array("n.f64s") == std::vector<float>{0.25f, -2.0f});
  CHECK_THROWS_WITH_AS(f.get_i32_array("n.i64s"),
                       str("gguf: n.gguf: at byte ", f.find_entry("n.i64s")->offset,
                           ": key 'n.i64s' element 1 is int64 3000000000, expected an integer in the int32 range")
                           .c_str(),
                       usage_error);
  CHECK_THROWS_WITH_AS(f.get_string_array("n.u8s"),
                       str("gguf: n.gguf: at byte ", f.find_entry("n.u8s")->offset,
                           ": key 'n.u8s' is array of 2 uint8, expected an array of strings").c_str(),
                       usage_error);
  CHECK_THROWS_AS(f.get_f32_array("n.str"), usage_error);
  CHECK_THROWS_AS(f.get_f32_array("n.strs"), usage_error);
}

TEST_CASE("value::element rejects indexes past the end and non-arrays") {
  const auto bytes = numbers_file();
  const file f = file::from_memory(bytes, "n.gguf");
  CHECK_THROWS_WITH_AS(f.find("n.u8s")->element(2),
                       "value::element: index 2 is past the end of an array of 2 elements", usage_error);
  CHECK_THROWS_WITH_AS(f.find("n.u8")->element(0), "value::element: called on a uint8, not an array", usage_error);
}

TEST_CASE("tensor_data rejects a tensor_info from another file") {
  const auto bytes = test::sample_file();
  const file f = file::from_memory(bytes, "one.gguf");
  const file g = file::from_memory(bytes, "two.gguf");
  CHECK_THROWS_WITH_AS(f.tensor_data(g.tensors()[0]),
                       "gguf: one.gguf: tensor_data: tensor 'a.weight' does not belong to this file", usage_error);
}

}  // namespace tg::gguf
