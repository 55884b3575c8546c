// dequant_test.cpp: half/bfloat16 conversions and hand-built quant blocks with known values.
//
// The thorough check is dequant_golden_test.cpp (llama.cpp's own output); these cases pin the
// layout rules of ggml/src/ggml-common.h on blocks small enough to reason about by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "llm/gguf/dequant_reference.hpp"
#include "llm/gguf/float16.hpp"

namespace tg::gguf {
namespace {

// Reference values of IEEE 754 binary16 and bfloat16 encodings.
static_assert(fp16_to_f32(0x3C00) == 1.0f);
static_assert(fp16_to_f32(0xC000) == -2.0f);
static_assert(fp16_to_f32(0x7BFF) == 65504.0f);                 // largest half
static_assert(fp16_to_f32(0x0400) == 6.103515625e-05f);         // smallest normal, 2^-14
static_assert(fp16_to_f32(0x0001) == 5.9604644775390625e-08f);  // smallest subnormal, 2^-24
static_assert(fp16_to_f32(0x03FF) == 6.09755516052246094e-05f); // largest subnormal
static_assert(fp16_to_f32(0x3555) == 0.333251953125f);
static_assert(fp16_to_f32(0x7C00) == INFINITY);
static_assert(fp16_to_f32(0xFC00) == -INFINITY);
static_assert(std::bit_cast<std::uint32_t>(fp16_to_f32(0x8000)) == 0x8000'0000u);  // -0
static_assert(bf16_to_f32(0x3F80) == 1.0f);
static_assert(bf16_to_f32(0xC049) == -3.140625f);

std::vector<std::byte> block(std::size_t size) { return std::vector<std::byte>(size); }
void put16(std::vector<std::byte>& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<std::byte>(v & 0xFF);
  b[at + 1] = static_cast<std::byte>(v >> 8);
}
std::vector<float> decode(tensor_type t, const std::vector<std::byte>& b, std::size_t n) {
  std::vector<float> y(n);
  dequantize_row(t, b.data(), y.data(), n);
  return y;
}

constexpr std::uint16_t half_one = 0x3C00, half_half = 0x3800, half_two = 0x4000, half_minus_eight = 0xC800;

}  // namespace

TEST_CASE("fp16 NaN keeps its payload") {
  const float f = fp16_to_f32(0x7E01);
  CHECK(std::isnan(f));
  CHECK(std::bit_cast<std::uint32_t>(f) == (0x7F80'0000u | 0x201u << 13));
}

TEST_CASE("Q4_0 puts low nibbles in the first half and high nibbles in the second") {
  auto b = block(18);
  put16(b, 0, half_half);
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<std::byte>(j | (15 - j) << 4);
  const auto y = decode(tensor_type::q4_0, b, 32);
  for (int j = 0; j < 16; ++j) {
    CHECK(y[j] == static_cast<float>(j - 8) * 0.5f);
    CHECK(y[j + 16] == static_cast<float>(7 - j) * 0.5f);
  }
}

TEST_CASE("Q4_1 adds the block minimum") {
  auto b = block(20);
  put16(b, 0, half_one);
  put16(b, 2, half_minus_eight);
  for (int j = 0; j < 16; ++j) b[4 + j] = static_cast<std::byte>(j | j << 4);
  const auto y = decode(tensor_type::q4_1, b, 32);
  for (int j = 0; j < 16; ++j) {
    CHECK(y[j] == static_cast<float>(j - 8));
    CHECK(y[j + 16] == static_cast<float>(j - 8));
  }
}

TEST_CASE("Q5_0 takes value j's fifth bit from bit j of qh") {
  auto b = block(22);
  put16(b, 0, half_one);
  put16(b, 4, 0xFFFF);  // qh bits 16..31: only the second half has the fifth bit
  for (int j = 0; j < 16; ++j) b[6 + j] = static_cast<std::byte>(j | j << 4);
  const auto y = decode(tensor_type::q5_0, b, 32);
  for (int j = 0; j < 16; ++j) {
    CHECK(y[j] == static_cast<float>(j - 16));
    CHECK(y[j + 16] == static_cast<float>(j));
  }
}

TEST_CASE("Q8_0 scales signed bytes") {
  auto b = block(34);
  put16(b, 0, half_two);
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<std::byte>(static_cast<std::uint8_t>(j - 16));
  const auto y = decode(tensor_type::q8_0, b, 32);
  for (int j = 0; j < 32; ++j) CHECK(y[j] == static_cast<float>(2 * (j - 16)));
}

TEST_CASE("Q4_K unpacks the high bits of scales 4-7 from the top of bytes 0-3") {
  auto b = block(144);
  put16(b, 0, half_one);
  put16(b, 2, half_one);
  // Scales 1, 2, 3, 4 in bytes 0-3, all mins zero; scales 5-8 in the low nibbles of bytes 8-11.
  for (int j = 0; j < 4; ++j) b[4 + j] = static_cast<std::byte>(j + 1);
  for (int j = 0; j < 4; ++j) b[4 + 8 + j] = static_cast<std::byte>(j + 5);
  // Scale 4 becomes 37 = 0b10'0101: low 4 bits stay 5, high bits 0b10 go in the top of byte 0.
  b[4] = static_cast<std::byte>(1 | 0b10 << 6);
  for (int i = 0; i < 128; ++i) b[16 + i] = std::byte{0x11};  // every value 1
  const auto y = decode(tensor_type::q4_k, b, 256);
  const float expected[8] = {1, 2, 3, 4, 37, 6, 7, 8};
  for (int k = 0; k < 256; ++k) CHECK(y[k] == expected[k / 32]);
}

TEST_CASE("Q6_K value k uses scale k/16 and d stored last") {
  auto b = block(210);
  for (int i = 0; i < 16; ++i) b[192 + i] = static_cast<std::byte>(i + 1);
  put16(b, 208, half_one);
  const auto y = decode(tensor_type::q6_k, b, 256);  // every quant is 0 - 32
  for (int k = 0; k < 256; ++k) CHECK(y[k] == -32.0f * static_cast<float>(k / 16 + 1));
}

TEST_CASE("plain float types widen exactly") {
  std::vector<std::byte> b(4);
  put16(b, 0, 0x3555);
  put16(b, 2, 0xC049);
  CHECK(decode(tensor_type::f16, b, 2) == std::vector<float>{0.333251953125f, fp16_to_f32(0xC049)});
  CHECK(decode(tensor_type::bf16, b, 2) == std::vector<float>{bf16_to_f32(0x3555), -3.140625f});
}

TEST_CASE("dequantize_row refuses unsupported types and partial blocks") {
  std::vector<std::byte> b(256);
  std::vector<float> y(256);
  CHECK_THROWS_WITH_AS(dequantize_row(tensor_type::iq4_xs, b.data(), y.data(), 256),
                       "dequantize_row: tensor type IQ4_XS is not supported (unsupported tensor type)", usage_error);
  CHECK_THROWS_WITH_AS(dequantize_row(tensor_type::q8_0, b.data(), y.data(), 40),
                       "dequantize_row: 40 Q8_0 values is not a whole number of 32-value blocks", usage_error);
}

}  // namespace tg::gguf
