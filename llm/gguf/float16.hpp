// float16.hpp: IEEE binary16 and bfloat16 to float32, in portable bit arithmetic.
//
// Both conversions are exact (every half and bfloat16 value is a float32), so no rounding mode
// or hardware support is involved.
#pragma once
#include <bit>
#include <cstdint>

namespace tg::gguf {

constexpr float fp16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h >> 15) << 31;
  const std::uint32_t exponent = (h >> 10) & 0x1F;
  std::uint32_t mantissa = h & 0x3FF;
  if (exponent == 0x1F)  // infinity or NaN: keep the payload
    return std::bit_cast<float>(sign | 0x7F80'0000u | mantissa << 13);
  if (exponent != 0)  // normal: rebias 15 -> 127
    return std::bit_cast<float>(sign | (exponent + 112) << 23 | mantissa << 13);
  if (mantissa == 0) return std::bit_cast<float>(sign);  // signed zero
  // Subnormal, mantissa * 2^-24: shift the leading one up to the implicit bit, then the value
  // is 1.m * 2^(-14 - shifts), a normal float32.
  std::uint32_t shifts = 0;
  while ((mantissa & 0x400) == 0) {
    mantissa <<= 1;
    ++shifts;
  }
  return std::bit_cast<float>(sign | (113 - shifts) << 23 | (mantissa & 0x3FF) << 13);
}

// bfloat16 is the top half of a float32.
constexpr float bf16_to_f32(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t(b) << 16); }

}  // namespace tg::gguf
