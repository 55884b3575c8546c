// float_encode.hpp: float32 to IEEE binary16 and bfloat16, rounding to nearest even.
//
// The inverse of gguf/float16.hpp. Quantizers store their block scales through these, and the
// F16/BF16 weight formats store every value through them.
#pragma once
#include <cstdint>

namespace tg::synth {

// Values beyond the half range (|x| >= 65520) become infinity; NaN stays a (quiet) NaN.
std::uint16_t f32_to_fp16(float x);
std::uint16_t f32_to_bf16(float x);

}  // namespace tg::synth
