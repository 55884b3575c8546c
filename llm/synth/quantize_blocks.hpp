// quantize_blocks.hpp: one function per block layout, used by quantize.cpp (internal).
//
// Each reads one block's worth of values (32 or 256) and writes the block's bytes.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tg::synth::blocks {

void quantize_q4_0(const float* x, std::byte* out);
void quantize_q4_1(const float* x, std::byte* out);
void quantize_q5_0(const float* x, std::byte* out);
void quantize_q5_1(const float* x, std::byte* out);
void quantize_q8_0(const float* x, std::byte* out);
void quantize_q4_k(const float* x, std::byte* out);
void quantize_q5_k(const float* x, std::byte* out);
void quantize_q6_k(const float* x, std::byte* out);

inline void store_u16(std::byte* p, std::uint16_t v) {
  p[0] = static_cast<std::byte>(v & 0xFF);
  p[1] = static_cast<std::byte>(v >> 8);
}

}  // namespace tg::synth::blocks
