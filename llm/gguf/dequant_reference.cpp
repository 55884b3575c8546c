// dequant_reference.cpp: one plain function per block layout of ggml/src/ggml-common.h.
//
// Each product is written in the order llama.cpp evaluates it ((d * scale) * q - dmin * min),
// and the library is built with -ffp-contract=off so no FMA changes a rounding: the output
// must match llama.cpp bit for bit.
#include "llm/gguf/dequant_reference.hpp"

#include <cstdint>
#include <cstring>

#include <tg/core/error.hpp>

#include "llm/gguf/float16.hpp"
#include "llm/gguf/little_endian.hpp"

namespace tg::gguf {

namespace {

using block_fn = void (*)(const std::byte* block, float* y);

std::uint8_t byte_at(const std::byte* p, std::size_t i) { return std::to_integer<std::uint8_t>(p[i]); }
std::uint16_t u16_at(const std::byte* p, std::size_t i) { return static_cast<std::uint16_t>(load_le(p + i, 2)); }
std::uint32_t u32_at(const std::byte* p, std::size_t i) { return static_cast<std::uint32_t>(load_le(p + i, 4)); }
float half_at(const std::byte* p, std::size_t i) { return fp16_to_f32(u16_at(p, i)); }
int lo(std::uint8_t q) { return q & 0x0F; }
int hi(std::uint8_t q) { return q >> 4; }

void decode_f32(const std::byte* b, float* y) { std::memcpy(y, b, sizeof(float)); }
void decode_f16(const std::byte* b, float* y) { y[0] = half_at(b, 0); }
void decode_bf16(const std::byte* b, float* y) { y[0] = bf16_to_f32(u16_at(b, 0)); }

// Q4_0: d, then 16 bytes; low nibbles are values 0-15, high nibbles 16-31, offset by 8.
void decode_q4_0(const std::byte* b, float* y) {
  const float d = half_at(b, 0);
  for (int j = 0; j < 16; ++j) {
    const std::uint8_t q = byte_at(b, 2 + j);
    y[j] = static_cast<float>(lo(q) - 8) * d;
    y[j + 16] = static_cast<float>(hi(q) - 8) * d;
  }
}

// Q4_1: d, m, then nibbles as Q4_0 but unsigned plus the minimum m.
void decode_q4_1(const std::byte* b, float* y) {
  const float d = half_at(b, 0), m = half_at(b, 2);
  for (int j = 0; j < 16; ++j) {
    const std::uint8_t q = byte_at(b, 4 + j);
    y[j] = static_cast<float>(lo(q)) * d + m;
    y[j + 16] = static_cast<float>(hi(q)) * d + m;
  }
}

// Q5_0: d, a 32-bit mask of fifth bits (bit j for value j), nibbles as Q4_0; offset by 16.
void decode_q5_0(const std::byte* b, float* y) {
  const float d = half_at(b, 0);
  const std::uint32_t qh = u32_at(b, 2);
  for (int j = 0; j < 16; ++j) {
    const std::uint8_t q = byte_at(b, 6 + j);
    const int v0 = lo(q) | static_cast<int>((qh >> j) & 1) << 4;
    const int v1 = hi(q) | static_cast<int>((qh >> (j + 16)) & 1) << 4;
    y[j] = static_cast<float>(v0 - 16) * d;
    y[j + 16] = static_cast<float>(v1 - 16) * d;
  }
}

// Q5_1: d, m, fifth-bit mask, nibbles; unsigned 5-bit values plus the minimum m.
void decode_q5_1(const std::byte* b, float* y) {
  const float d = half_at(b, 0), m = half_at(b, 2);
  const std::uint32_t qh = u32_at(b, 4);
  for (int j = 0; j < 16; ++j) {
    const std::uint8_t q = byte_at(b, 8 + j);
    const int v0 = lo(q) | static_cast<int>((qh >> j) & 1) << 4;
    const int v1 = hi(q) | static_cast<int>((qh >> (j + 16)) & 1) << 4;
    y[j] = static_cast<float>(v0) * d + m;
    y[j + 16] = static_cast<float>(v1) * d + m;
  }
}

// Q8_0: d, then 32 signed bytes.
void decode_q8_0(const std::byte* b, float* y) {
  const float d = half_at(b, 0);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(static_cast<std::int8_t>(byte_at(b, 2 + j))) * d;
}

// Q2_K: 16 scale bytes (low nibble scale, high nibble min), 64 bytes of 2-bit values, d, dmin.
// Half n uses qs[32n..32n+31]; shift 2j picks sub-blocks 8n+2j (bytes 0-15) and 8n+2j+1 (16-31).
void decode_q2_k(const std::byte* b, float* y) {
  const std::byte* scales = b;
  const std::byte* qs = b + 16;
  const float d = half_at(b, 80), dmin = half_at(b, 82);
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < 4; ++j)
      for (int half = 0; half < 2; ++half) {
        const std::uint8_t sc = byte_at(scales, 8 * n + 2 * j + half);
        const float dl = d * static_cast<float>(sc & 15);
        const float ml = dmin * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) {
          const int q = (byte_at(qs, 32 * n + 16 * half + l) >> (2 * j)) & 3;
          y[128 * n + 32 * j + 16 * half + l] = dl * static_cast<float>(q) - ml;
        }
      }
}

// Q3_K scale i: 6 bits stored offset by 32; low 4 bits in scales[0..7] (two per byte), high 2
// bits in scales[8..11].
int q3_k_scale(const std::byte* scales, int i) {
  const int low = i < 8 ? byte_at(scales, i) & 15 : byte_at(scales, i - 8) >> 4;
  const int high = (byte_at(scales, 8 + i % 4) >> (2 * (i / 4))) & 3;
  return (low | high << 4) - 32;
}

// Q3_K: hmask (the third bit, cleared meaning -4), 2-bit values ordered as Q2_K, scales, d.
void decode_q3_k(const std::byte* b, float* y) {
  const std::byte* hmask = b;
  const std::byte* qs = b + 32;
  const std::byte* scales = b + 96;
  const float d = half_at(b, 108);
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < 4; ++j)
      for (int half = 0; half < 2; ++half) {
        const float dl = d * static_cast<float>(q3_k_scale(scales, 8 * n + 2 * j + half));
        for (int l = 0; l < 16; ++l) {
          const int pos = 16 * half + l;  // position within the 32-value group
          const int low = (byte_at(qs, 32 * n + pos) >> (2 * j)) & 3;
          const bool high = (byte_at(hmask, pos) >> (4 * n + j)) & 1;
          y[128 * n + 32 * j + pos] = dl * static_cast<float>(low - (high ? 0 : 4));
        }
      }
}

// Q4_K/Q5_K: eight 6-bit scales and mins packed in 12 bytes.
void k_scale_min(const std::byte* s, int j, int& scale, int& min) {
  if (j < 4) {
    scale = byte_at(s, j) & 63;
    min = byte_at(s, j + 4) & 63;
  } else {
    scale = (byte_at(s, j + 4) & 0x0F) | (byte_at(s, j - 4) >> 6) << 4;
    min = (byte_at(s, j + 4) >> 4) | (byte_at(s, j) >> 6) << 4;
  }
}

// Q4_K and Q5_K share everything but the fifth bit; qh is null for Q4_K.
void decode_k_4or5(const std::byte* b, const std::byte* qh, const std::byte* qs, float* y) {
  const float d = half_at(b, 0), dmin = half_at(b, 2);
  for (int c = 0; c < 4; ++c)
    for (int half = 0; half < 2; ++half) {
      const int sub = 2 * c + half;
      int scale = 0, min = 0;
      k_scale_min(b + 4, sub, scale, min);
      const float dl = d * static_cast<float>(scale);
      const float ml = dmin * static_cast<float>(min);
      for (int l = 0; l < 32; ++l) {
        const std::uint8_t q = byte_at(qs, 32 * c + l);
        int v = half == 0 ? lo(q) : hi(q);
        if (qh != nullptr) v += 16 * ((byte_at(qh, l) >> sub) & 1);
        y[64 * c + 32 * half + l] = dl * static_cast<float>(v) - ml;
      }
    }
}

void decode_q4_k(const std::byte* b, float* y) { decode_k_4or5(b, nullptr, b + 16, y); }
void decode_q5_k(const std::byte* b, float* y) { decode_k_4or5(b, b + 16, b + 48, y); }

// Q6_K: low nibbles, 2-bit high parts, 16 signed scales, and d last. Two halves of 128.
void decode_q6_k(const std::byte* b, float* y) {
  const float d = half_at(b, 208);
  for (int h = 0; h < 2; ++h) {
    const std::byte* ql = b + 64 * h;
    const std::byte* qh = b + 128 + 32 * h;
    const std::byte* sc = b + 192 + 8 * h;
    float* out = y + 128 * h;
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const std::uint8_t high = byte_at(qh, l);
      const int q[4] = {
          (lo(byte_at(ql, l)) | ((high >> 0) & 3) << 4) - 32,
          (lo(byte_at(ql, l + 32)) | ((high >> 2) & 3) << 4) - 32,
          (hi(byte_at(ql, l)) | ((high >> 4) & 3) << 4) - 32,
          (hi(byte_at(ql, l + 32)) | ((high >> 6) & 3) << 4) - 32,
      };
      for (int k = 0; k < 4; ++k) {
        const float scale = d * static_cast<float>(static_cast<std::int8_t>(byte_at(sc, is + 2 * k)));
        out[l + 32 * k] = scale * static_cast<float>(q[k]);
      }
    }
  }
}

block_fn decoder_for(tensor_type type) {
  switch (type) {
    case tensor_type::f32: return decode_f32;
    case tensor_type::f16: return decode_f16;
    case tensor_type::bf16: return decode_bf16;
    case tensor_type::q4_0: return decode_q4_0;
    case tensor_type::q4_1: return decode_q4_1;
    case tensor_type::q5_0: return decode_q5_0;
    case tensor_type::q5_1: return decode_q5_1;
    case tensor_type::q8_0: return decode_q8_0;
    case tensor_type::q2_k: return decode_q2_k;
    case tensor_type::q3_k: return decode_q3_k;
    case tensor_type::q4_k: return decode_q4_k;
    case tensor_type::q5_k: return decode_q5_k;
    case tensor_type::q6_k: return decode_q6_k;
    default: return nullptr;
  }
}

}  // namespace

void dequantize_row(tensor_type type, const std::byte* src, float* dst, std::size_t n_elements) {
  const tensor_type_traits& t = traits_of(type);
  const block_fn decode = decoder_for(type);
  if (decode == nullptr || !t.dequantizable)
    throw usage_error(str("dequantize_row: tensor type ", t.name, " is not supported (unsupported tensor type)"));
  if (n_elements % t.block_elems != 0)
    throw usage_error(str("dequantize_row: ", n_elements, " ", t.name, " values is not a whole number of ",
                          t.block_elems, "-value blocks"));
  for (std::size_t i = 0; i < n_elements / t.block_elems; ++i)
    decode(src + i * t.block_bytes, dst + i * t.block_elems);
}

}  // namespace tg::gguf
