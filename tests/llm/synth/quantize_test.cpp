// quantize_test.cpp: float encoders and quantizers, read back with the reference dequantizer.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "llm/gguf/dequant_reference.hpp"
#include "llm/gguf/float16.hpp"
#include "llm/synth/float_encode.hpp"
#include "llm/synth/quantize.hpp"
#include "tests/llm/synth/synth_test_util.hpp"

namespace tg::synth {
namespace {

using gguf::tensor_type;

std::vector<float> gaussian_row(std::size_t n, std::uint64_t seed, float std = 0.02f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, std);
  std::vector<float> row(n);
  for (float& x : row) x = normal(rng);
  return row;
}

std::vector<float> round_trip(tensor_type type, const std::vector<float>& row) {
  std::vector<std::byte> q(gguf::row_size_bytes(type, row.size()));
  quantize_row(type, row.data(), q.data(), row.size());
  std::vector<float> back(row.size());
  gguf::dequantize_row(type, q.data(), back.data(), back.size());
  return back;
}

}  // namespace

TEST_CASE("f32_to_fp16 inverts fp16_to_f32 on every half value") {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = gguf::fp16_to_f32(static_cast<std::uint16_t>(h));
    CAPTURE(h);
    if (std::isnan(f)) {
      CHECK(std::isnan(gguf::fp16_to_f32(f32_to_fp16(f))));
    } else {
      CHECK(f32_to_fp16(f) == h);
    }
  }
}

TEST_CASE("f32_to_fp16 rounds to nearest, ties to even, and overflows to infinity") {
  CHECK(f32_to_fp16(1.0f + 0x1.0p-11f) == 0x3C00);  // halfway between 1 and next: even is 1
  CHECK(f32_to_fp16(1.0f + 0x1.8p-11f) == 0x3C01);  // above halfway
  CHECK(f32_to_fp16(1.0f + 0x1.8p-10f) == 0x3C02);  // halfway between odd 0x3C01 and 0x3C02
  CHECK(f32_to_fp16(65504.0f) == 0x7BFF);
  CHECK(f32_to_fp16(65519.0f) == 0x7BFF);
  CHECK(f32_to_fp16(65520.0f) == 0x7C00);
  CHECK(f32_to_fp16(-1e9f) == 0xFC00);
  CHECK(f32_to_fp16(0x1.0p-25f) == 0x0000);   // half of the smallest subnormal: ties to even 0
  CHECK(f32_to_fp16(0x1.8p-25f) == 0x0001);
  CHECK(f32_to_fp16(-0.0f) == 0x8000);
  CHECK(f32_to_fp16(0x1.ff8p-15f) == 0x03FF);  // largest subnormal, 1023 * 2^-24
  CHECK(f32_to_fp16(0x1.ffcp-15f) == 0x0400);  // 1023.5 units: ties to even, the smallest normal
}

TEST_CASE("f32_to_bf16 keeps the top half, rounding to nearest even") {
  CHECK(f32_to_bf16(1.0f) == 0x3F80);
  CHECK(f32_to_bf16(std::bit_cast<float>(0x3F80'8000u)) == 0x3F80);  // tie, even stays
  CHECK(f32_to_bf16(std::bit_cast<float>(0x3F81'8000u)) == 0x3F82);  // tie, odd rounds up
  CHECK(f32_to_bf16(std::bit_cast<float>(0x3F80'8001u)) == 0x3F81);
  CHECK(std::isnan(gguf::bf16_to_f32(f32_to_bf16(NAN))));
  for (std::uint32_t b = 0; b < 0x10000; b += 7) {
    const float f = gguf::bf16_to_f32(static_cast<std::uint16_t>(b));
    if (!std::isnan(f)) CHECK(f32_to_bf16(f) == b);
  }
}

TEST_CASE("quantized random rows dequantize close to the input") {
  // Bounds are about 1.25 times the worst relative RMS error measured on these rows (F16
  // 0.00021, BF16 0.0017, Q8_0 0.0055, Q6_K 0.019, Q5_K 0.039, Q5_1 0.038, Q5_0 0.044, Q4_K
  // 0.080, Q4_1 0.080, Q4_0 0.087); a misplaced bit in a block layout gives errors near 1.
  struct bound {
    tensor_type type;
    double max_error;
  };
  const bound bounds[] = {
      {tensor_type::f32, 0.0},    {tensor_type::f16, 3e-4},   {tensor_type::bf16, 2.2e-3},
      {tensor_type::q8_0, 0.007}, {tensor_type::q6_k, 0.024}, {tensor_type::q5_k, 0.048},
      {tensor_type::q5_1, 0.048}, {tensor_type::q5_0, 0.055}, {tensor_type::q4_k, 0.10},
      {tensor_type::q4_1, 0.10},  {tensor_type::q4_0, 0.11},
  };
  for (const bound& b : bounds) {
    CAPTURE(gguf::tensor_type_name(b.type));
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const std::vector<float> row = gaussian_row(4096, seed);
      CHECK(test::relative_rms_error(round_trip(b.type, row), row) <= b.max_error);
    }
  }
}

TEST_CASE("quantizers handle zero, constant and one-sided blocks") {
  const tensor_type types[] = {tensor_type::q4_0, tensor_type::q4_1, tensor_type::q5_0, tensor_type::q5_1,
                               tensor_type::q8_0, tensor_type::q4_k, tensor_type::q5_k, tensor_type::q6_k};
  for (const tensor_type type : types) {
    CAPTURE(gguf::tensor_type_name(type));
    SUBCASE("zeros stay zero") {
      const std::vector<float> zeros(256, 0.0f);
      for (const float y : round_trip(type, zeros)) CHECK(y == 0.0f);
    }
    SUBCASE("a constant row comes back within 1%") {
      const std::vector<float> c(256, 0.75f);
      for (const float y : round_trip(type, c)) CHECK(y == doctest::Approx(0.75f).epsilon(0.01));
    }
    SUBCASE("all-negative and all-positive rows keep their sign") {
      std::vector<float> row = gaussian_row(256, 9);
      for (float& x : row) x = std::fabs(x) + 0.01f;
      for (const float y : round_trip(type, row)) CHECK(y >= 0.0f);
      for (float& x : row) x = -x;
      for (const float y : round_trip(type, row)) CHECK(y <= 0.0f);
    }
  }
}

TEST_CASE("the extreme value of a block is reproduced exactly up to the fp16 scale") {
  // Legacy symmetric types map the largest magnitude to an end of the quant range.
  std::vector<float> row = gaussian_row(32, 3);
  row[5] = -0.5f;
  CHECK(round_trip(tensor_type::q8_0, row)[5] == doctest::Approx(-0.5f).epsilon(1e-3));
  CHECK(round_trip(tensor_type::q4_0, row)[5] == doctest::Approx(-0.5f).epsilon(1e-3));
  CHECK(round_trip(tensor_type::q5_0, row)[5] == doctest::Approx(-0.5f).epsilon(1e-3));
}

TEST_CASE("quantize_row rejects types without a quantizer and partial blocks") {
  std::vector<float> row(256, 1.0f);
  std::vector<std::byte> out(1024);
  CHECK_THROWS_WITH_AS(quantize_row(tensor_type::q2_k, row.data(), out.data(), 256),
                       "quantize_row: tensor type Q2_K cannot be written (supported: F32, F16, BF16, Q4_0, Q4_1, "
                       "Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)",
                       usage_error);
  CHECK_THROWS_WITH_AS(quantize_row(tensor_type::q4_k, row.data(), out.data(), 128),
                       "quantize_row: a row of 128 values is not a whole number of 256-value Q4_K blocks", usage_error);
  CHECK(is_quantizable(tensor_type::q6_k));
  CHECK_FALSE(is_quantizable(tensor_type::iq4_xs));
}

}  // namespace tg::synth
