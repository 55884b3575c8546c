// dtype.hpp: the element types tensors hold, and the C++ types that map to them.
#pragma once
#include <bit>
#include <cstdint>
#include <string_view>

namespace tg {

enum class dtype : std::uint8_t { bool_, int8, uint8, int16, uint16, int32, uint32, int64, float16, bfloat16, float32, float64 };

// Storage types for the two 16-bit floats: the bits, plus conversions to and from float.
struct half {
  std::uint16_t bits = 0;
  constexpr half() = default;
  constexpr explicit half(float f) : bits(from_float(f)) {}
  constexpr explicit operator float() const { return to_float(bits); }

  // IEEE binary16 <-> binary32, round to nearest even; NaN and inf kept.
  static constexpr float to_float(std::uint16_t h) {
    std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F80'0000u | man << 13);
    if (exp == 0) {  // zero or subnormal: value = man * 2^-24
      float v = float(man) * (1.0f / 16777216.0f);
      return sign ? -v : v;
    }
    return std::bit_cast<float>(sign | (exp + 112) << 23 | man << 13);
  }
  static constexpr std::uint16_t from_float(float f) {
    std::uint32_t x = std::bit_cast<std::uint32_t>(f), sign = (x >> 16) & 0x8000u;
    std::uint32_t abs = x & 0x7FFF'FFFFu;
    if (abs >= 0x7F80'0000u) return std::uint16_t(sign | 0x7C00u | (abs > 0x7F80'0000u ? 0x200u : 0u));
    if (abs >= 0x477F'F000u) return std::uint16_t(sign | 0x7C00u);  // rounds past 65504: inf
    if (abs < 0x3880'0000u) {  // below 2^-14: subnormal half, value in units of 2^-24
      float a = std::bit_cast<float>(abs) * 16777216.0f;
      auto q = std::uint32_t(a);
      float rest = a - float(q);
      if (rest > 0.5f || (rest == 0.5f && (q & 1u))) ++q;
      return std::uint16_t(sign | q);
    }
    std::uint32_t mant = abs - 0x3800'0000u;  // rebias exponent 127 -> 15
    std::uint32_t round = (mant >> 13) & 1u;
    mant += 0xFFFu + round;
    return std::uint16_t(sign | (mant >> 13));
  }
};

struct bfloat16 {
  std::uint16_t bits = 0;
  constexpr bfloat16() = default;
  constexpr explicit bfloat16(float f) : bits(from_float(f)) {}
  constexpr explicit operator float() const { return to_float(bits); }
  static constexpr float to_float(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t(b) << 16); }
  static constexpr std::uint16_t from_float(float f) {
    std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    if ((x & 0x7FFF'FFFFu) > 0x7F80'0000u) return std::uint16_t((x >> 16) | 0x40u);  // keep NaN a NaN
    return std::uint16_t((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
  }
};

constexpr int size_bytes(dtype t) {
  switch (t) {
    case dtype::bool_: case dtype::int8: case dtype::uint8: return 1;
    case dtype::int16: case dtype::uint16: case dtype::float16: case dtype::bfloat16: return 2;
    case dtype::int32: case dtype::uint32: case dtype::float32: return 4;
    case dtype::int64: case dtype::float64: return 8;
  }
  return 0;
}

constexpr bool is_float(dtype t) {
  return t == dtype::float16 || t == dtype::bfloat16 || t == dtype::float32 || t == dtype::float64;
}
constexpr bool is_signed_int(dtype t) {
  return t == dtype::int8 || t == dtype::int16 || t == dtype::int32 || t == dtype::int64;
}
constexpr bool is_unsigned_int(dtype t) {
  return t == dtype::uint8 || t == dtype::uint16 || t == dtype::uint32 || t == dtype::bool_;
}

constexpr std::string_view name(dtype t) {
  constexpr std::string_view names[] = {"bool", "int8", "uint8", "int16", "uint16", "int32",
                                        "uint32", "int64", "float16", "bfloat16", "float32", "float64"};
  return names[int(t)];
}

// The dtype of a C++ element type: dtype_of<float> == dtype::float32.
template <class T> inline constexpr bool has_dtype = false;
template <class T> inline constexpr dtype dtype_of = dtype::float32;
#define TG_DTYPE_OF(T, D) \
  template <> inline constexpr bool has_dtype<T> = true; \
  template <> inline constexpr dtype dtype_of<T> = dtype::D;
TG_DTYPE_OF(bool, bool_)
TG_DTYPE_OF(std::int8_t, int8)
TG_DTYPE_OF(std::uint8_t, uint8)
TG_DTYPE_OF(std::int16_t, int16)
TG_DTYPE_OF(std::uint16_t, uint16)
TG_DTYPE_OF(std::int32_t, int32)
TG_DTYPE_OF(std::uint32_t, uint32)
TG_DTYPE_OF(std::int64_t, int64)
TG_DTYPE_OF(half, float16)
TG_DTYPE_OF(bfloat16, bfloat16)
TG_DTYPE_OF(float, float32)
TG_DTYPE_OF(double, float64)
#undef TG_DTYPE_OF

// The type two operands are computed in: the wider float, else the wider integer.
constexpr dtype promote(dtype a, dtype b) {
  if (a == b) return a;
  auto rank = [](dtype t) {
    switch (t) {
      case dtype::bool_: return 0;
      case dtype::uint8: return 1; case dtype::int8: return 2;
      case dtype::uint16: return 3; case dtype::int16: return 4;
      case dtype::uint32: return 5; case dtype::int32: return 6;
      case dtype::int64: return 7;
      case dtype::bfloat16: return 8; case dtype::float16: return 9;
      case dtype::float32: return 10; case dtype::float64: return 11;
    }
    return 0;
  };
  if ((a == dtype::bfloat16 && b == dtype::float16) || (a == dtype::float16 && b == dtype::bfloat16))
    return dtype::float32;
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace tg
