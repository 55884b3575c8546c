// quantize_k.cpp: the 256-value K-quant blocks Q4_K, Q5_K and Q6_K (ggml/src/ggml-common.h).
//
// Round-to-nearest at both levels: each sub-block gets the scale (and, for Q4_K/Q5_K, the
// minimum) that spans its values, those are rounded to 6-bit (or int8) multiples of the
// block's fp16 super-scale, and every value is rounded using the scales as stored. llama.cpp
// searches for better scales instead; ours are valid, just slightly less accurate.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "llm/gguf/float16.hpp"
#include "llm/synth/float_encode.hpp"
#include "llm/synth/quantize_blocks.hpp"

namespace tg::synth::blocks {

namespace {

constexpr int k_block = 256;

// Rounds through fp16 and back: the value a reader will see.
float stored_half(float x) { return gguf::fp16_to_f32(f32_to_fp16(x)); }

int round_clamped(float v, int lo, int hi) {
  return static_cast<int>(std::clamp(std::lround(v), static_cast<long>(lo), static_cast<long>(hi)));
}

// The 12 scale bytes of Q4_K/Q5_K: bytes 0-3 hold scales 0-3 (low 6 bits) and the top two
// bits of scales 4-7; bytes 4-7 the same for mins; bytes 8-11 the low nibbles of scale and
// min 4-7. The inverse of get_scale_min_k4 in ggml/src/ggml-quants.c.
void pack_k_scales(const int* sc, const int* mn, std::byte* out) {
  for (int j = 0; j < 4; ++j) {
    out[j] = static_cast<std::byte>((sc[j] & 63) | (sc[j + 4] >> 4) << 6);
    out[j + 4] = static_cast<std::byte>((mn[j] & 63) | (mn[j + 4] >> 4) << 6);
    out[j + 8] = static_cast<std::byte>((sc[j + 4] & 15) | (mn[j + 4] & 15) << 4);
  }
}

// Q4_K (max_q 15) and Q5_K (max_q 31): eight sub-blocks of 32, y = d*sc*q - dmin*mn.
void quantize_k_4or5(const float* x, std::byte* out, int max_q, std::byte* qh, std::byte* qs) {
  constexpr int subs = 8, sub_len = 32;
  float scale[subs], offset[subs];  // offset >= 0 is what gets subtracted
  float max_scale = 0.0f, max_offset = 0.0f;
  for (int s = 0; s < subs; ++s) {
    const float* v = x + s * sub_len;
    // The minimum is stored as a non-negative amount to subtract, so it is at most 0.
    const float lo = std::min(0.0f, *std::min_element(v, v + sub_len));
    const float hi = *std::max_element(v, v + sub_len);
    scale[s] = (hi - lo) / static_cast<float>(max_q);
    offset[s] = -lo;
    max_scale = std::max(max_scale, scale[s]);
    max_offset = std::max(max_offset, offset[s]);
  }
  const float d = stored_half(max_scale / 63.0f), dmin = stored_half(max_offset / 63.0f);
  store_u16(out, f32_to_fp16(d));
  store_u16(out + 2, f32_to_fp16(dmin));
  int sc[subs], mn[subs];
  for (int s = 0; s < subs; ++s) {
    sc[s] = d > 0.0f ? round_clamped(scale[s] / d, 0, 63) : 0;
    mn[s] = dmin > 0.0f ? round_clamped(offset[s] / dmin, 0, 63) : 0;
  }
  pack_k_scales(sc, mn, out + 4);

  std::fill(qs, qs + 128, std::byte{0});
  if (qh != nullptr) std::fill(qh, qh + 32, std::byte{0});
  for (int s = 0; s < subs; ++s) {
    const float step = d * static_cast<float>(sc[s]), shift = dmin * static_cast<float>(mn[s]);
    const int chunk = s / 2, nibble_shift = (s % 2) * 4;
    for (int l = 0; l < sub_len; ++l) {
      const int q = step > 0.0f ? round_clamped((x[s * sub_len + l] + shift) / step, 0, max_q) : 0;
      std::byte& b = qs[32 * chunk + l];
      b |= static_cast<std::byte>((q & 15) << nibble_shift);
      // Q5_K: the fifth bit of sub-block s is bit s of qh[l].
      if (qh != nullptr) qh[l] |= static_cast<std::byte>(((q >> 4) & 1) << s);
    }
  }
}

}  // namespace

void quantize_q4_k(const float* x, std::byte* out) { quantize_k_4or5(x, out, 15, nullptr, out + 16); }
void quantize_q5_k(const float* x, std::byte* out) { quantize_k_4or5(x, out, 31, out + 16, out + 48); }

// Q6_K: sixteen sub-blocks of 16 with signed int8 scales, y = d*sc*(q - 32), d stored last.
void quantize_q6_k(const float* x, std::byte* out) {
  constexpr int subs = 16, sub_len = 16;
  float scale[subs];
  float max_scale = 0.0f;
  for (int s = 0; s < subs; ++s) {
    // Map the value of largest magnitude to -32, the end of the range with the extra step.
    float extreme = 0.0f;
    for (int l = 0; l < sub_len; ++l)
      if (std::fabs(x[s * sub_len + l]) > std::fabs(extreme)) extreme = x[s * sub_len + l];
    scale[s] = extreme / -32.0f;
    max_scale = std::max(max_scale, std::fabs(scale[s]));
  }
  const float d = stored_half(max_scale / 127.0f);
  std::byte* ql = out;
  std::byte* qh = out + 128;
  std::byte* scales = out + 192;
  store_u16(out + 208, f32_to_fp16(d));
  int sc[subs];
  for (int s = 0; s < subs; ++s) {
    sc[s] = d > 0.0f ? round_clamped(scale[s] / d, -128, 127) : 0;
    scales[s] = static_cast<std::byte>(static_cast<std::uint8_t>(static_cast<std::int8_t>(sc[s])));
  }
  std::fill(ql, ql + 192, std::byte{0});  // ql and qh
  for (int k = 0; k < k_block; ++k) {
    const float step = d * static_cast<float>(sc[k / sub_len]);
    const int q = (step != 0.0f ? round_clamped(x[k] / step, -32, 31) : 0) + 32;
    // Value k sits in half h, group g of 32 within the half, position l in the group:
    // groups 0 and 1 use low nibbles of ql[l] and ql[l + 32], groups 2 and 3 the high ones;
    // qh[l] holds the top two bits of all four groups, group g at bit 2g.
    const int h = k / 128, g = (k % 128) / 32, l = k % 32;
    ql[64 * h + l + 32 * (g & 1)] |= static_cast<std::byte>((q & 15) << (g >= 2 ? 4 : 0));
    qh[32 * h + l] |= static_cast<std::byte>((q >> 4) << (2 * g));
  }
}

}  // namespace tg::synth::blocks
