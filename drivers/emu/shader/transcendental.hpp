// transcendental.hpp: v_exp_f32, v_log_f32, v_rcp_f32, v_rsq_f32, v_sqrt_f32, v_sin_f32, v_cos_f32.
//
// The hardware's results are approximations. The bound taken here is issue 11's: 1 ULP for exp, log,
// rcp, rsq and sqrt, and 2^-20 absolute for sin and cos over their valid input range; AMD's RDNA3
// ISA reference guide ("Vector ALU Operations", the V_EXP_F32 .. V_COS_F32 entries) gives no tighter
// figure. The results here are the correctly rounded values (computed in double, rounded once), which
// lie inside that bound, so a kernel that passes here may still differ from a card by an ULP.
// v_sin_f32 and v_cos_f32 take their input in revolutions: sin(x * 2 * pi) (same guide).
#pragma once
#include <cmath>

namespace tg::emu::shader {

inline float hw_exp2(float x) { return float(std::exp2(double(x))); }
inline float hw_log2(float x) { return float(std::log2(double(x))); }
inline float hw_rcp(float x) { return float(1.0 / double(x)); }
inline float hw_rsq(float x) { return float(1.0 / std::sqrt(double(x))); }
inline float hw_sqrt(float x) { return std::sqrt(x); }
inline float hw_sin(float x) { return float(std::sin(double(x) * 6.283185307179586476925286766559)); }
inline float hw_cos(float x) { return float(std::cos(double(x) * 6.283185307179586476925286766559)); }

// The perturbation of launch::perturb_transcendentals: one ULP up for exp/log/rcp/rsq/sqrt, 2^-20
// up for sin/cos, on odd lanes.
inline float perturb_ulp(float v, unsigned lane) { return (lane & 1) ? std::nextafter(v, INFINITY) : v; }
inline float perturb_abs(float v, unsigned lane) { return (lane & 1) ? v + 0x1p-20f : v; }

}  // namespace tg::emu::shader
