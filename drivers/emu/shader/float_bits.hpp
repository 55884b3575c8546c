// float_bits.hpp: bit casts, IEEE half precision, and the float -> integer conversions of the VALU
// (AMD RDNA3 ISA reference guide, V_CVT_I32_F32 and friends: NaN gives 0, out of range saturates).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tg::emu::shader {

inline float as_f32(std::uint32_t b) { return std::bit_cast<float>(b); }
inline std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }
inline double as_f64(std::uint64_t b) { return std::bit_cast<double>(b); }
inline std::uint64_t bits_of(double f) { return std::bit_cast<std::uint64_t>(f); }

// gfx12's v_maximum / v_minimum (and s_maximum / s_minimum): IEEE 754-2019 maximum and minimum, unlike v_max_num's maxNum: a NaN
// operand gives NaN (quieted, as a + b does), and -0 orders below +0.
inline float ieee_maximum(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline float ieee_minimum(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// binary16 -> binary32, exact.
inline float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  if (exp == 0x1F) return as_f32(sign | 0x7F800000 | man << 13);
  if (exp != 0) return as_f32(sign | (exp + 112) << 23 | man << 13);
  const float v = std::ldexp(float(man), -24);  // zero or subnormal
  return sign ? -v : v;
}

// binary32 -> binary16, round to nearest even; NaN stays quiet NaN.
inline std::uint16_t f32_to_f16(float f) {
  const std::uint32_t b = bits_of(f);
  const std::uint16_t sign = std::uint16_t((b >> 16) & 0x8000);
  const std::uint32_t abs = b & 0x7FFFFFFF;
  if (abs > 0x7F800000) return std::uint16_t(sign | 0x7E00 | ((abs >> 13) & 0x3FF));
  if (abs >= 0x477FF000) return std::uint16_t(sign | 0x7C00);  // rounds to >= 65520: infinity
  if (abs < 0x38800000) {  // below the smallest normal half: round in units of 2^-24
    const float scaled = as_f32(abs) * 16777216.0f;  // exact: a power-of-two scale
    const float r = std::nearbyint(scaled);          // the FPU's round-to-nearest-even
    return std::uint16_t(sign | std::uint16_t(r));
  }
  const std::uint32_t exp = (abs >> 23) - 112, man = abs & 0x7FFFFF;
  std::uint32_t h = exp << 10 | man >> 13;
  const std::uint32_t rest = man & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: still right
  return std::uint16_t(sign | h);
}

inline std::int32_t f32_to_i32(double f) {
  if (std::isnan(f)) return 0;
  if (f <= -2147483648.0) return std::numeric_limits<std::int32_t>::min();
  if (f >= 2147483647.0) return std::numeric_limits<std::int32_t>::max();
  return std::int32_t(f);
}
inline std::uint32_t f32_to_u32(double f) {
  if (std::isnan(f) || f <= 0) return 0;
  if (f >= 4294967295.0) return 0xFFFFFFFFu;
  return std::uint32_t(f);
}

inline std::uint32_t reverse_bits32(std::uint32_t v) {
  v = (v >> 1 & 0x55555555u) | (v & 0x55555555u) << 1;
  v = (v >> 2 & 0x33333333u) | (v & 0x33333333u) << 2;
  v = (v >> 4 & 0x0F0F0F0Fu) | (v & 0x0F0F0F0Fu) << 4;
  v = (v >> 8 & 0x00FF00FFu) | (v & 0x00FF00FFu) << 8;
  return v >> 16 | v << 16;
}

inline bool is_denormal(float f) { return std::fpclassify(f) == FP_SUBNORMAL; }
inline int exponent_field(float f) { return int((bits_of(f) >> 23) & 0xFF); }

}  // namespace tg::emu::shader

namespace tg::emu::shader {

// a.lo * b.lo + a.hi * b.hi + c for f16 pairs, rounded once to f32 (v_dot2_f32_f16, v_dot2acc_f32_f16:
// the products of halves are exact, so only the sum rounds).
inline float dot2_f16(std::uint32_t a, std::uint32_t b, float c) {
  return float(double(f16_to_f32(std::uint16_t(a))) * f16_to_f32(std::uint16_t(b)) +
               double(f16_to_f32(std::uint16_t(a >> 16))) * f16_to_f32(std::uint16_t(b >> 16)) + double(c));
}

// binary32 -> binary16 rounding toward zero (V_CVT_PK_RTZ_F16_F32).
inline std::uint16_t f32_to_f16_rtz(float f) {
  const std::uint16_t h = f32_to_f16(f);
  if (std::isnan(f) || std::isinf(f)) return h;
  const float back = f16_to_f32(h);
  if (std::fabs(back) <= std::fabs(f)) return (h & 0x7FFF) == 0x7C00 ? std::uint16_t(h - 1) : h;
  return std::uint16_t(h - 1);  // rounded away from zero: the next value toward zero
}

}  // namespace tg::emu::shader
