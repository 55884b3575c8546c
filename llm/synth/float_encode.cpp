// float_encode.cpp: round-to-nearest-even narrowing done on the bit patterns.
#include "llm/synth/float_encode.hpp"

#include <bit>
#include <cmath>

namespace tg::synth {

std::uint16_t f32_to_fp16(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t abs = bits & 0x7FFF'FFFFu;
  if (abs > 0x7F80'0000u) return sign | 0x7E00u;  // NaN
  // 65520 = 0x477FF000 is halfway between the largest half (65504) and 65536, and rounds
  // (to even) up: from there on the result is infinity.
  if (abs >= 0x477F'F000u) return sign | 0x7C00u;
  if (abs >= 0x3880'0000u) {  // at least 2^-14: a normal half
    // Rebias the exponent from 127 to 15 in place, then drop 13 mantissa bits rounding to
    // nearest even; a carry out of the mantissa correctly bumps the exponent.
    const std::uint32_t rebiased = abs - (112u << 23);
    const std::uint32_t rounded = rebiased + 0x0FFFu + ((rebiased >> 13) & 1u);
    return sign | static_cast<std::uint16_t>(rounded >> 13);
  }
  // Subnormal half: a multiple of 2^-24. The scaling is exact, and nearbyint rounds to even
  // (the default rounding mode); 1024 becomes the smallest normal, 0x0400, as it should.
  const float units = std::nearbyint(std::bit_cast<float>(abs) * 16777216.0f);
  return sign | static_cast<std::uint16_t>(units);
}

std::uint16_t f32_to_bf16(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & 0x7FFF'FFFFu) > 0x7F80'0000u) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);  // NaN
  const std::uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

}  // namespace tg::synth
