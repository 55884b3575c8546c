// quantize_legacy.cpp: the 32-value block types Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 (ggml/src/ggml-common.h).
//
// Round-to-nearest with the arithmetic of llama.cpp's reference quantizer (scale from the
// extreme value, values multiplied by the reciprocal scale, +0.5 and truncation), so that for
// the same input the blocks come out the same; tests compare against llama-quantize output.
#include <cmath>
#include <cstdint>

#include "llm/synth/float_encode.hpp"
#include "llm/synth/quantize_blocks.hpp"

namespace tg::synth::blocks {

namespace {

constexpr int legacy_block = 32;

// The value of largest magnitude, keeping its sign (the first one on ties).
float signed_extreme(const float* x) {
  float amax = 0.0f, extreme = 0.0f;
  for (int j = 0; j < legacy_block; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      extreme = x[j];
    }
  }
  return extreme;
}

struct min_max {
  float min, max;
};
min_max range_of(const float* x) {
  min_max r{x[0], x[0]};
  for (int j = 1; j < legacy_block; ++j) {
    r.min = std::fmin(r.min, x[j]);
    r.max = std::fmax(r.max, x[j]);
  }
  return r;
}

float reciprocal(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

int clamp_max(int q, int max) { return q < max ? q : max; }

// The 32 values as unsigned quants 0..max: `offset` + 0.5 is added before truncation, which
// rounds to nearest because every shifted value is non-negative.
void to_quants(const float* x, float shift, float id, float offset, int max, std::uint8_t* q) {
  for (int j = 0; j < legacy_block; ++j)
    q[j] = static_cast<std::uint8_t>(clamp_max(static_cast<std::int8_t>((x[j] - shift) * id + offset), max));
}

// Low nibbles of bytes 0-15 are values 0-15, high nibbles values 16-31.
void pack_nibbles(const std::uint8_t* q, std::byte* out) {
  for (int j = 0; j < 16; ++j) out[j] = static_cast<std::byte>((q[j] & 0x0F) | (q[j + 16] & 0x0F) << 4);
}

// Bit 4 of value j goes to bit j of a little-endian uint32.
void pack_fifth_bits(const std::uint8_t* q, std::byte* out) {
  std::uint32_t qh = 0;
  for (int j = 0; j < legacy_block; ++j) qh |= std::uint32_t((q[j] >> 4) & 1) << j;
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::byte>(qh >> (8 * i));
}

}  // namespace

// Q4_0: d = extreme / -8 maps the extreme value to quant 0 (-8), the rest within [-8, 7].
void quantize_q4_0(const float* x, std::byte* out) {
  const float d = signed_extreme(x) / -8.0f;
  store_u16(out, f32_to_fp16(d));
  std::uint8_t q[legacy_block];
  to_quants(x, 0.0f, reciprocal(d), 8.5f, 15, q);
  pack_nibbles(q, out + 2);
}

void quantize_q4_1(const float* x, std::byte* out) {
  const min_max r = range_of(x);
  const float d = (r.max - r.min) / 15.0f;
  store_u16(out, f32_to_fp16(d));
  store_u16(out + 2, f32_to_fp16(r.min));
  std::uint8_t q[legacy_block];
  to_quants(x, r.min, reciprocal(d), 0.5f, 15, q);
  pack_nibbles(q, out + 4);
}

void quantize_q5_0(const float* x, std::byte* out) {
  const float d = signed_extreme(x) / -16.0f;
  store_u16(out, f32_to_fp16(d));
  std::uint8_t q[legacy_block];
  to_quants(x, 0.0f, reciprocal(d), 16.5f, 31, q);
  pack_fifth_bits(q, out + 2);
  pack_nibbles(q, out + 6);
}

void quantize_q5_1(const float* x, std::byte* out) {
  const min_max r = range_of(x);
  const float d = (r.max - r.min) / 31.0f;
  store_u16(out, f32_to_fp16(d));
  store_u16(out + 2, f32_to_fp16(r.min));
  std::uint8_t q[legacy_block];
  to_quants(x, r.min, reciprocal(d), 0.5f, 31, q);
  pack_fifth_bits(q, out + 4);
  pack_nibbles(q, out + 8);
}

// Q8_0: symmetric, d = max|x| / 127, values rounded half away from zero.
void quantize_q8_0(const float* x, std::byte* out) {
  float amax = 0.0f;
  for (int j = 0; j < legacy_block; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = reciprocal(d);
  store_u16(out, f32_to_fp16(d));
  for (int j = 0; j < legacy_block; ++j)
    out[2 + j] = static_cast<std::byte>(static_cast<std::int8_t>(std::round(x[j] * id)));
}

}  // namespace tg::synth::blocks
