// tensor_type_test.cpp: the type table matches ggml's enum ggml_type and ggml-common.h, and row sizes follow it.
#include <doctest/doctest.h>

#include "llm/gguf/tensor_type.hpp"

namespace tg::gguf {
namespace {

constexpr bool layout_is(tensor_type t, std::uint32_t elems, std::uint32_t bytes) {
  return traits_of(t).block_elems == elems && traits_of(t).block_bytes == bytes;
}

// Block sizes as ggml/src/ggml-common.h defines them (its block_* structs).
static_assert(layout_is(tensor_type::f32, 1, 4));
static_assert(layout_is(tensor_type::f16, 1, 2));
static_assert(layout_is(tensor_type::bf16, 1, 2));
static_assert(layout_is(tensor_type::q4_0, 32, 18));
static_assert(layout_is(tensor_type::q4_1, 32, 20));
static_assert(layout_is(tensor_type::q5_0, 32, 22));
static_assert(layout_is(tensor_type::q5_1, 32, 24));
static_assert(layout_is(tensor_type::q8_0, 32, 34));
static_assert(layout_is(tensor_type::q2_k, 256, 84));
static_assert(layout_is(tensor_type::q3_k, 256, 110));
static_assert(layout_is(tensor_type::q4_k, 256, 144));
static_assert(layout_is(tensor_type::q5_k, 256, 176));
static_assert(layout_is(tensor_type::q6_k, 256, 210));
static_assert(layout_is(tensor_type::iq4_xs, 256, 136));
static_assert(layout_is(tensor_type::mxfp4, 32, 17));

// Ids as in ggml.h.
static_assert(static_cast<std::uint32_t>(tensor_type::q4_k) == 12);
static_assert(static_cast<std::uint32_t>(tensor_type::bf16) == 30);
static_assert(static_cast<std::uint32_t>(tensor_type::q1_0) == 41);

// Removed ids are unknown.
static_assert(find_tensor_type(4) == nullptr && find_tensor_type(5) == nullptr);
static_assert(find_tensor_type(31) == nullptr && find_tensor_type(38) == nullptr);
static_assert(find_tensor_type(42) == nullptr);

static_assert(tensor_type_name(tensor_type::q6_k) == "Q6_K");
static_assert(is_dequantizable(tensor_type::q3_k) && !is_dequantizable(tensor_type::iq4_xs));
static_assert(!has_known_layout(tensor_type::iq2_xxs) && has_known_layout(tensor_type::iq3_s));

}  // namespace

TEST_CASE("row sizes are whole blocks times block bytes") {
  CHECK(row_size_bytes(tensor_type::q4_k, 2048) == 8 * 144);
  CHECK(row_size_bytes(tensor_type::q8_0, 256) == 8 * 34);
  CHECK(row_size_bytes(tensor_type::f16, 7) == 14);
  CHECK(row_size_bytes(tensor_type::q6_k, 0) == 0);
}

TEST_CASE("row sizes are refused for partial blocks, unknown layouts and overflow") {
  CHECK_THROWS_WITH_AS(row_size_bytes(tensor_type::q4_k, 896),
                       "row_size_bytes: a row of 896 Q4_K values is not a whole number of 256-value blocks", usage_error);
  CHECK_THROWS_WITH_AS(row_size_bytes(tensor_type::iq1_s, 256),
                       "row_size_bytes: tensor type IQ1_S has no known block layout (unsupported tensor type)",
                       usage_error);
  CHECK_THROWS_AS(row_size_bytes(tensor_type::f64, 1ull << 62), usage_error);
}

TEST_CASE("every table entry has a distinct id and a name") {
  for (std::size_t i = 0; i < tensor_types.size(); ++i) {
    CHECK_FALSE(tensor_types[i].name.empty());
    CHECK(find_tensor_type(static_cast<std::uint32_t>(tensor_types[i].type)) == &tensor_types[i]);
  }
}

}  // namespace tg::gguf
