// exec_valu.cpp: VOP1, VOP2, VOPC and VOP3 (including VOP3SD and the cross-lane ops), in the VOP3
// opcode space (semantics: AMD RDNA3 / RDNA4 ISA reference guides, "Vector ALU Operations";
// opcode numbers: opcode_names.cpp). gfx12's renumbered opcodes are mapped onto gfx11's first.
#include <bit>
#include <cmath>

#include "drivers/emu/shader/transcendental.hpp"
#include "drivers/emu/shader/valu_operands.hpp"

namespace tg::emu::shader {

namespace {

// gfx12 opcodes whose operation has a different gfx11 number (v_max_num_f32 for v_max_f32, the
// VOP2 encodings of 64-bit ops that are VOP3-only on gfx11, ...): the gfx11 number.
unsigned canonical_op(isa_gen gen, unsigned op) {
  if (gen != isa_gen::gfx12) return op;
  switch (op) {
    case 256 + 2: return 807;      // v_add_f64
    case 256 + 6: return 808;      // v_mul_f64
    case 256 + 13: return 809;     // v_min_num_f64
    case 256 + 14: return 810;     // v_max_num_f64
    case 256 + 31: return 828;     // v_lshlrev_b64
    case 256 + 21: return 256 + 15;  // v_min_num_f32
    case 256 + 22: return 256 + 16;  // v_max_num_f32
    case 256 + 48: return 256 + 58;  // v_min_num_f16
    case 256 + 49: return 256 + 57;  // v_max_num_f16
    case 553: return 537;          // v_min3_num_f32
    case 554: return 540;          // v_max3_num_f32
    case 561: return 543;          // v_med3_num_f32
    case 555: return 585;          // v_min3_num_f16
    case 556: return 588;          // v_max3_num_f16
    case 562: return 591;          // v_med3_num_f16
    case 616: return 607;          // v_minmax_num_f32
    case 617: return 606;          // v_maxmin_num_f32
    default: return op;
  }
}

template <class T>
T med3(T a, T b, T c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); }
float fmed3(float a, float b, float c) { return std::fmax(std::fmin(a, b), std::fmin(std::fmax(a, b), c)); }
template <class T>
bool compare_i(unsigned cond, T a, T b) {
  switch (cond) {
    case 0: return false;
    case 1: return a < b;
    case 2: return a == b;
    case 3: return a <= b;
    case 4: return a > b;
    case 5: return a != b;
    case 6: return a >= b;
    default: return true;
  }
}
// V_CMP_CLASS: mask bits 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal,
// 8 +normal, 9 +inf.
unsigned class_bit(double v, bool quiet_nan) {
  if (std::isnan(v)) return quiet_nan ? 1 : 0;
  const bool neg = std::signbit(v);
  switch (std::fpclassify(v)) {
    case FP_INFINITE: return neg ? 2 : 9;
    case FP_NORMAL: return neg ? 3 : 8;
    case FP_SUBNORMAL: return neg ? 4 : 7;
    default: return neg ? 5 : 6;
  }
}

enum class dst : std::uint8_t { v32, v64, v16 };

// V_DIV_SCALE_F32 (RDNA3 ISA guide pseudocode): scales numerator or denominator by 2^+-64 so the
// Newton-Raphson division cannot over- or underflow; `flag` tells V_DIV_FMAS_F32 to scale back.
float div_scale(float s0, float den, float num, bool& flag) {
  flag = false;
  if (den == 0 || num == 0) return std::numeric_limits<float>::quiet_NaN();
  const int ed = exponent_field(den), en = exponent_field(num);
  if (en - ed >= 96) { flag = true; return s0 == den ? std::ldexp(s0, 64) : s0; }
  if (is_denormal(den)) return std::ldexp(s0, 64);
  const float inv = 1.0f / den, q = num / den;
  if (is_denormal(inv) && !is_denormal(q)) { flag = true; return s0 == den ? std::ldexp(s0, 64) : s0; }
  if (is_denormal(inv)) return std::ldexp(s0, -64);
  if (is_denormal(q)) { flag = true; return s0 == num ? std::ldexp(s0, 64) : s0; }
  if (en <= 23) return std::ldexp(s0, 64);
  return s0;
}

// V_DIV_FIXUP_F32: the special cases of q = num / den around the quotient s0.
float div_fixup(float s0, float den, float num) {
  const bool sign = std::signbit(den) != std::signbit(num);
  const float inf = std::numeric_limits<float>::infinity();
  if (std::isnan(num)) return num;
  if (std::isnan(den)) return den;
  if (den == 0 && num == 0) return std::numeric_limits<float>::quiet_NaN();
  if (std::isinf(den) && std::isinf(num)) return std::numeric_limits<float>::quiet_NaN();
  if (den == 0 || std::isinf(num)) return sign ? -inf : inf;
  if (std::isinf(den) || num == 0) return sign ? -0.0f : 0.0f;
  if (std::isnan(s0)) return sign ? -inf : inf;
  return sign ? -std::fabs(s0) : std::fabs(s0);
}

}  // namespace

bool compare_float(unsigned cond, double a, double b) {
  const bool u = std::isnan(a) || std::isnan(b);
  switch (cond) {
    case 0: return false;
    case 1: return a < b;
    case 2: return a == b;
    case 3: return a <= b;
    case 4: return a > b;
    case 5: return !u && a != b;
    case 6: return a >= b;
    case 7: return !u;
    case 8: return u;
    case 9: return !(a >= b);
    case 10: return u || a == b;
    case 11: return !(a > b);
    case 12: return !(a <= b);
    case 13: return u || a != b;
    case 14: return !(a < b);
    default: return true;
  }
}

int dpp_source_lane(const dpp_control& d, unsigned lane) {
  if (d.dpp8) return int((lane & ~7u) | ((d.lane_sel >> (3 * (lane & 7))) & 7));
  const unsigned c = d.ctrl, row = lane & ~15u, in_row = lane & 15;
  if (c <= 0xFF) return int((lane & ~3u) | ((c >> (2 * (lane & 3))) & 3));  // quad_perm
  if (c >= 0x101 && c <= 0x10F) { const unsigned n = c & 15; return in_row + n < 16 ? int(lane + n) : -1; }  // row_shl
  if (c >= 0x111 && c <= 0x11F) { const unsigned n = c & 15; return in_row >= n ? int(lane - n) : -1; }      // row_shr
  if (c >= 0x121 && c <= 0x12F) return int(row + ((in_row + 16 - (c & 15)) & 15));                          // row_ror
  if (c == 0x140) return int(row + 15 - in_row);                                                            // row_mirror
  if (c == 0x141) return int((lane & ~7u) + 7 - (lane & 7));                                                // row_half_mirror
  if (c >= 0x150 && c <= 0x15F) return int(row + (c & 15));                                                 // row_share
  if (c >= 0x160 && c <= 0x16F) return int(row + (in_row ^ (c & 15)));                                      // row_xmask
  return -2;  // not a gfx11/gfx12 control
}

void valu_operands::prepare_dpp() {
  for (unsigned l = 0; l < wave_lanes; ++l) {
    const unsigned row = l / 16, bank = (l & 15) / 4;
    if (!((in_.dpp.row_mask >> row) & 1) || !((in_.dpp.bank_mask >> bank) & 1)) dpp_mask_ &= ~(1u << l);
    const int s = dpp_source_lane(in_.dpp, l);
    if (s == -2) fail_instruction(c_, in_, "DPP control not valid on this target");
    // A source lane that is out of the row, or inactive without FI, reads 0 under bound_ctrl and
    // leaves the lane unwritten otherwise.
    const bool invalid = s < 0 || (!in_.dpp.fi && !w_.active(unsigned(s)));
    dpp_lane_[l] = std::uint8_t(s < 0 ? l : unsigned(s));
    if (invalid) {
      if (in_.dpp.bound_ctrl) dpp_zero_ |= 1u << l;
      else dpp_mask_ &= ~(1u << l);
    }
  }
}

void exec_valu(exec_context& c, wave& w, const instruction& in) {
  const valu_operands s(c, w, in);
  const unsigned op = canonical_op(c.l.gen, in.op);
  const std::uint32_t mask = s.write_mask();
  std::array<std::uint64_t, wave_lanes> r{};
  std::uint32_t bits = 0;  // compare results and carries
  dst kind = dst::v32;
  auto each = [&](auto fn) {
    for (unsigned l = 0; l < wave_lanes; ++l)
      if ((mask >> l) & 1) r[l] = fn(l);
  };
  auto each_bit = [&](auto fn) {  // a per-lane bit (compares, carries)
    for (unsigned l = 0; l < wave_lanes; ++l)
      if ((mask >> l) & 1) bits |= std::uint32_t(fn(l) ? 1u : 0u) << l;
  };
  auto F = [&](unsigned i, unsigned l) { return s.f32(i, l); };
  auto U = [&](unsigned i, unsigned l) { return s.u32(i, l); };
  auto I = [&](unsigned i, unsigned l) { return std::int32_t(s.u32(i, l)); };
  auto H = [&](unsigned i, unsigned l) { return s.f16(i, l); };
  auto fr = [&](float v) -> std::uint64_t { return bits_of(s.out_f32(v)); };
  auto hr = [&](float v) -> std::uint64_t { return f32_to_f16(s.out_f16(v)); };
  const bool perturb = c.l.perturb_transcendentals;
  auto tu = [&](float v, unsigned l) { return perturb ? perturb_ulp(v, l) : v; };  // transcendental.hpp
  auto ta = [&](float v, unsigned l) { return perturb ? perturb_abs(v, l) : v; };
  auto dr = [&](double v) -> std::uint64_t { return bits_of(s.out_f64(v)); };

  if (op < 256) {  // VOPC: compare classes in opcode order (opcode_names.cpp)
    const unsigned base = op & 127, cond = base & 15;
    if (base < 16) each_bit([&](unsigned l) { return compare_float(cond, H(0, l), H(1, l)); });
    else if (base < 32) each_bit([&](unsigned l) { return compare_float(cond, F(0, l), F(1, l)); });
    else if (base < 48) each_bit([&](unsigned l) { return compare_float(cond, s.f64(0, l), s.f64(1, l)); });
    else if (base < 56) each_bit([&](unsigned l) { return compare_i(cond & 7, std::int16_t(s.u16(0, l)), std::int16_t(s.u16(1, l))); });
    else if (base < 64) each_bit([&](unsigned l) { return compare_i(cond & 7, s.u16(0, l), s.u16(1, l)); });
    else if (base < 72) each_bit([&](unsigned l) { return compare_i(cond & 7, I(0, l), I(1, l)); });
    else if (base < 80) each_bit([&](unsigned l) { return compare_i(cond & 7, U(0, l), U(1, l)); });
    else if (base < 88) each_bit([&](unsigned l) { return compare_i(cond & 7, std::int64_t(s.u64(0, l)), std::int64_t(s.u64(1, l))); });
    else if (base < 96) each_bit([&](unsigned l) { return compare_i(cond & 7, s.u64(0, l), s.u64(1, l)); });
    else if (base == 125) each_bit([&](unsigned l) { return (U(1, l) >> class_bit(H(0, l), std::isnan(H(0, l)) && (s.u16(0, l) & 0x200))) & 1; });
    else if (base == 126) each_bit([&](unsigned l) { return (U(1, l) >> class_bit(F(0, l), (s.u32(0, l) >> 22) & 1)) & 1; });
    else if (base == 127) each_bit([&](unsigned l) { return (U(1, l) >> class_bit(s.f64(0, l), (s.u64(0, l) >> 51) & 1)) & 1; });
    else fail_instruction(c, in, "VOPC opcode not implemented");
    // Inactive lanes read back as 0 (RDNA3 ISA guide, "VOPC"); v_cmpx writes EXEC only.
    if (op >= 128) w.sgpr[src::exec_lo] = bits;
    else w.write_sgpr(in.fam == family::vop3 ? in.vdst : in.sdst, bits);
    return;
  }

  const std::uint32_t lane_bits = s.u32(2, 0);  // VCC / SGPR mask of cndmask and the carry-in forms
  auto bit = [&](unsigned l) { return (lane_bits >> l) & 1; };
  auto mad64 = [&](unsigned l, bool sign) {
    const std::uint64_t c64 = s.u64(2, l);
    if (!sign) {
      const unsigned __int128 p = (unsigned __int128)(std::uint64_t{U(0, l)} * U(1, l)) + c64;
      return std::pair<std::uint64_t, bool>(std::uint64_t(p), (p >> 64) != 0);
    }
    const __int128 p = __int128(std::int64_t(I(0, l)) * I(1, l)) + __int128(std::int64_t(c64));
    return std::pair<std::uint64_t, bool>(std::uint64_t(p), p != __int128(std::int64_t(std::uint64_t(p))));
  };
  switch (op) {
    // ---- VOP2, at 256 + op
    case 256 + 1:  // v_cndmask_b32; the VOP3 form's abs / neg act on the sign bit (float selects)
      each([&](unsigned l) {
        const unsigned i = bit(l) ? 1 : 0;
        std::uint32_t v = U(i, l);
        if ((in.abs >> i) & 1) v &= 0x7FFFFFFFu;
        if ((in.neg >> i) & 1) v ^= 0x80000000u;
        return v;
      });
      break;
    case 256 + 2:  // v_dot2acc_f32_f16 (gfx11): D += S0.lo*S1.lo + S0.hi*S1.hi
      each([&](unsigned l) {
        const std::uint32_t a = U(0, l), b = U(1, l);
        return fr(dot2_f16(a, b, as_f32(w.v(in.vdst, l))));
      });
      break;
    case 256 + 3: each([&](unsigned l) { return fr(F(0, l) + F(1, l)); }); break;
    case 256 + 4: each([&](unsigned l) { return fr(F(0, l) - F(1, l)); }); break;
    case 256 + 5: each([&](unsigned l) { return fr(F(1, l) - F(0, l)); }); break;
    case 256 + 7: each([&](unsigned l) { const float a = F(0, l), b = F(1, l); return fr(a == 0 || b == 0 ? 0.0f : a * b); }); break;
    case 256 + 8: each([&](unsigned l) { return fr(F(0, l) * F(1, l)); }); break;
    case 256 + 9: each([&](unsigned l) { return std::uint32_t(((I(0, l) << 8) >> 8) * ((I(1, l) << 8) >> 8)); }); break;
    case 256 + 10: each([&](unsigned l) { return std::uint32_t((std::int64_t((I(0, l) << 8) >> 8) * ((I(1, l) << 8) >> 8)) >> 32); }); break;
    case 256 + 11: each([&](unsigned l) { return (U(0, l) & 0xFFFFFF) * (U(1, l) & 0xFFFFFF); }); break;
    case 256 + 12: each([&](unsigned l) { return std::uint32_t((std::uint64_t(U(0, l) & 0xFFFFFF) * (U(1, l) & 0xFFFFFF)) >> 32); }); break;
    case 256 + 15: each([&](unsigned l) { return fr(std::fmin(F(0, l), F(1, l))); }); break;
    case 256 + 16: each([&](unsigned l) { return fr(std::fmax(F(0, l), F(1, l))); }); break;
    case 256 + 17: each([&](unsigned l) { return std::uint32_t(std::min(I(0, l), I(1, l))); }); break;
    case 256 + 18: each([&](unsigned l) { return std::uint32_t(std::max(I(0, l), I(1, l))); }); break;
    case 256 + 19: each([&](unsigned l) { return std::min(U(0, l), U(1, l)); }); break;
    case 256 + 20: each([&](unsigned l) { return std::max(U(0, l), U(1, l)); }); break;
    case 256 + 24: each([&](unsigned l) { return U(1, l) << (U(0, l) & 31); }); break;
    case 256 + 25: each([&](unsigned l) { return U(1, l) >> (U(0, l) & 31); }); break;
    case 256 + 26: each([&](unsigned l) { return std::uint32_t(I(1, l) >> (U(0, l) & 31)); }); break;
    case 256 + 27: each([&](unsigned l) { return U(0, l) & U(1, l); }); break;
    case 256 + 28: each([&](unsigned l) { return U(0, l) | U(1, l); }); break;
    case 256 + 29: each([&](unsigned l) { return U(0, l) ^ U(1, l); }); break;
    case 256 + 30: each([&](unsigned l) { return ~(U(0, l) ^ U(1, l)); }); break;
    case 256 + 32: case 256 + 33: case 256 + 34:  // v_add/sub/subrev_co_ci_u32: carry in from src2, out to sdst
      each([&](unsigned l) {
        const std::uint64_t a = U(0, l), b = U(1, l), ci = bit(l);
        const std::uint64_t t = op == 288 ? a + b + ci : op == 289 ? a - b - ci : b - a - ci;
        if ((t >> 32) != 0) bits |= 1u << l;  // carry out, or borrow (the difference wrapped)
        return std::uint32_t(t);
      });
      break;
    case 256 + 37: each([&](unsigned l) { return U(0, l) + U(1, l); }); break;
    case 256 + 38: each([&](unsigned l) { return U(0, l) - U(1, l); }); break;
    case 256 + 39: each([&](unsigned l) { return U(1, l) - U(0, l); }); break;
    case 256 + 43: each([&](unsigned l) { return fr(std::fma(F(0, l), F(1, l), as_f32(w.v(in.vdst, l)))); }); break;
    case 256 + 44: each([&](unsigned l) { return fr(std::fma(F(0, l), as_f32(in.literal), F(1, l))); }); break;
    case 256 + 45: each([&](unsigned l) { return fr(std::fma(F(0, l), F(1, l), as_f32(in.literal))); }); break;
    case 256 + 47:  // v_cvt_pk_rtz_f16_f32: round toward zero
      each([&](unsigned l) { return std::uint64_t(f32_to_f16_rtz(F(0, l))) | std::uint64_t(f32_to_f16_rtz(F(1, l))) << 16; });
      break;
    case 256 + 50: each([&](unsigned l) { return hr(H(0, l) + H(1, l)); }); kind = dst::v16; break;
    case 256 + 51: each([&](unsigned l) { return hr(H(0, l) - H(1, l)); }); kind = dst::v16; break;
    case 256 + 52: each([&](unsigned l) { return hr(H(1, l) - H(0, l)); }); kind = dst::v16; break;
    case 256 + 53: each([&](unsigned l) { return hr(H(0, l) * H(1, l)); }); kind = dst::v16; break;
    case 256 + 54: each([&](unsigned l) { return hr(float(std::fma(double(H(0, l)), double(H(1, l)), double(f16_to_f32(std::uint16_t(w.v(in.vdst, l))))))); }); kind = dst::v16; break;
    case 256 + 55: each([&](unsigned l) { return hr(float(std::fma(double(H(0, l)), double(f16_to_f32(std::uint16_t(in.literal))), double(H(1, l))))); }); kind = dst::v16; break;
    case 256 + 56: each([&](unsigned l) { return hr(float(std::fma(double(H(0, l)), double(H(1, l)), double(f16_to_f32(std::uint16_t(in.literal)))))); }); kind = dst::v16; break;
    case 256 + 57: each([&](unsigned l) { return hr(std::fmax(H(0, l), H(1, l))); }); kind = dst::v16; break;
    case 256 + 58: each([&](unsigned l) { return hr(std::fmin(H(0, l), H(1, l))); }); kind = dst::v16; break;
    case 256 + 59: each([&](unsigned l) { return hr(std::ldexp(H(0, l), std::clamp(std::int32_t(std::int16_t(s.u16(1, l))), -64, 64))); }); kind = dst::v16; break;

    // ---- VOP1, at 384 + op
    case 384 + 0: return;  // v_nop
    case 384 + 1: each([&](unsigned l) { return U(0, l); }); break;
    case 384 + 2: {  // v_readfirstlane_b32: the lowest active lane, lane 0 when EXEC is 0
      const unsigned l = w.exec() ? unsigned(std::countr_zero(w.exec())) : 0;
      w.write_sgpr(in.vdst, s.u32(0, l));
      return;
    }
    case 384 + 3: each([&](unsigned l) { return std::uint32_t(f32_to_i32(s.f64(0, l))); }); break;
    case 384 + 4: each([&](unsigned l) { return dr(double(I(0, l))); }); kind = dst::v64; break;
    case 384 + 5: each([&](unsigned l) { return fr(float(I(0, l))); }); break;
    case 384 + 6: each([&](unsigned l) { return fr(float(U(0, l))); }); break;
    case 384 + 7: each([&](unsigned l) { return f32_to_u32(F(0, l)); }); break;
    case 384 + 8: each([&](unsigned l) { return std::uint32_t(f32_to_i32(F(0, l))); }); break;
    case 384 + 10: each([&](unsigned l) { return hr(F(0, l)); }); kind = dst::v16; break;
    case 384 + 11: each([&](unsigned l) { return fr(H(0, l)); }); break;
    case 384 + 12: each([&](unsigned l) { return std::uint32_t(f32_to_i32(std::floor(double(F(0, l)) + 0.5))); }); break;
    case 384 + 13: each([&](unsigned l) { return std::uint32_t(f32_to_i32(std::floor(F(0, l)))); }); break;
    case 384 + 15: each([&](unsigned l) { return fr(float(s.f64(0, l))); }); break;
    case 384 + 16: each([&](unsigned l) { return dr(double(F(0, l))); }); kind = dst::v64; break;
    case 384 + 17: case 384 + 18: case 384 + 19: case 384 + 20:
      each([&](unsigned l) { return fr(float((U(0, l) >> (8 * (op - 401))) & 0xFF)); });
      break;
    case 384 + 21: each([&](unsigned l) { return f32_to_u32(s.f64(0, l)); }); break;
    case 384 + 22: each([&](unsigned l) { return dr(double(U(0, l))); }); kind = dst::v64; break;
    case 384 + 23: each([&](unsigned l) { return dr(std::trunc(s.f64(0, l))); }); kind = dst::v64; break;
    case 384 + 24: each([&](unsigned l) { return dr(std::ceil(s.f64(0, l))); }); kind = dst::v64; break;
    case 384 + 25: each([&](unsigned l) { return dr(std::nearbyint(s.f64(0, l))); }); kind = dst::v64; break;
    case 384 + 26: each([&](unsigned l) { return dr(std::floor(s.f64(0, l))); }); kind = dst::v64; break;
    case 384 + 32: each([&](unsigned l) { const float x = F(0, l); return fr(std::isinf(x) ? std::numeric_limits<float>::quiet_NaN() : x - std::floor(x)); }); break;
    case 384 + 33: each([&](unsigned l) { return fr(std::trunc(F(0, l))); }); break;
    case 384 + 34: each([&](unsigned l) { return fr(std::ceil(F(0, l))); }); break;
    case 384 + 35: each([&](unsigned l) { return fr(std::nearbyint(F(0, l))); }); break;
    case 384 + 36: each([&](unsigned l) { return fr(std::floor(F(0, l))); }); break;
    case 384 + 37: each([&](unsigned l) { return fr(tu(hw_exp2(F(0, l)), l)); }); break;
    case 384 + 39: each([&](unsigned l) { return fr(tu(hw_log2(F(0, l)), l)); }); break;
    case 384 + 42: case 384 + 43: each([&](unsigned l) { return fr(tu(hw_rcp(F(0, l)), l)); }); break;
    case 384 + 46: each([&](unsigned l) { return fr(tu(hw_rsq(F(0, l)), l)); }); break;
    case 384 + 47: each([&](unsigned l) { return dr(1.0 / s.f64(0, l)); }); kind = dst::v64; break;
    case 384 + 49: each([&](unsigned l) { return dr(1.0 / std::sqrt(s.f64(0, l))); }); kind = dst::v64; break;
    case 384 + 51: each([&](unsigned l) { return fr(tu(hw_sqrt(F(0, l)), l)); }); break;
    case 384 + 52: each([&](unsigned l) { return dr(std::sqrt(s.f64(0, l))); }); kind = dst::v64; break;
    case 384 + 53: each([&](unsigned l) { return fr(ta(hw_sin(F(0, l)), l)); }); break;
    case 384 + 54: each([&](unsigned l) { return fr(ta(hw_cos(F(0, l)), l)); }); break;
    case 384 + 55: each([&](unsigned l) { return ~U(0, l); }); break;
    case 384 + 56: each([&](unsigned l) { return reverse_bits32((U(0, l))); }); break;
    case 384 + 57: each([&](unsigned l) { const std::uint32_t v = U(0, l); return v ? std::uint32_t(std::countl_zero(v)) : ~0u; }); break;
    case 384 + 58: each([&](unsigned l) { const std::uint32_t v = U(0, l); return v ? std::uint32_t(std::countr_zero(v)) : ~0u; }); break;
    // v_cls_i32 (LLVM's ffbh_i32, used in 64-bit int -> float): the leading bits equal to the sign
    // bit, sign included; -1 when every bit is (0 and -1). RDNA3 ISA guide, VOP1 V_CLS_I32.
    case 384 + 59: each([&](unsigned l) { const std::uint32_t v = U(0, l); return v == 0 || v == ~0u ? ~0u : std::uint32_t(std::int32_t(v) < 0 ? std::countl_one(v) : std::countl_zero(v)); }); break;
    case 384 + 63: each([&](unsigned l) { int e = 0; const float x = F(0, l); if (std::isfinite(x)) std::frexp(x, &e); return std::uint32_t(e); }); break;
    case 384 + 64: each([&](unsigned l) { int e = 0; const float x = F(0, l); return fr(std::isfinite(x) ? std::frexp(x, &e) : x); }); break;
    case 384 + 66: {  // v_movreld_b32: VGPR[vdst + M0] = src0
      const unsigned m0 = w.sgpr[src::m0];
      for (unsigned l = 0; l < wave_lanes; ++l)
        if ((mask >> l) & 1) r[l] = U(0, l);
      for (unsigned l = 0; l < wave_lanes; ++l)
        if ((mask >> l) & 1) w.v(in.vdst + m0, l) = std::uint32_t(r[l]);
      return;
    }
    case 384 + 67:  // v_movrels_b32: vdst = VGPR[src0 + M0]
      if (in.srcs[0] < src::vgpr0) fail_instruction(c, in, "v_movrels_b32 of a non-VGPR source");
      each([&](unsigned l) { return w.v(in.srcs[0] - src::vgpr0 + w.sgpr[src::m0], l); });
      break;
    case 384 + 80: each([&](unsigned l) { return hr(float(s.u16(0, l))); }); kind = dst::v16; break;
    case 384 + 81: each([&](unsigned l) { return hr(float(std::int16_t(s.u16(0, l)))); }); kind = dst::v16; break;
    case 384 + 82: each([&](unsigned l) { const float x = H(0, l); return std::uint32_t(std::isnan(x) || x <= 0 ? 0 : x >= 65535 ? 65535 : unsigned(x)); }); kind = dst::v16; break;
    case 384 + 83: each([&](unsigned l) { const float x = H(0, l); return std::uint32_t(std::uint16_t(std::isnan(x) ? 0 : std::int16_t(std::clamp(x, -32768.0f, 32767.0f)))); }); kind = dst::v16; break;
    case 384 + 84: each([&](unsigned l) { return hr(1.0f / H(0, l)); }); kind = dst::v16; break;
    case 384 + 85: each([&](unsigned l) { return hr(std::sqrt(H(0, l))); }); kind = dst::v16; break;
    case 384 + 86: each([&](unsigned l) { return hr(1.0f / std::sqrt(H(0, l))); }); kind = dst::v16; break;
    case 384 + 87: each([&](unsigned l) { return hr(std::log2(H(0, l))); }); kind = dst::v16; break;
    case 384 + 88: each([&](unsigned l) { return hr(std::exp2(H(0, l))); }); kind = dst::v16; break;
    case 384 + 91: each([&](unsigned l) { return hr(std::floor(H(0, l))); }); kind = dst::v16; break;
    case 384 + 92: each([&](unsigned l) { return hr(std::ceil(H(0, l))); }); kind = dst::v16; break;
    case 384 + 93: each([&](unsigned l) { return hr(std::trunc(H(0, l))); }); kind = dst::v16; break;
    case 384 + 94: each([&](unsigned l) { return hr(std::nearbyint(H(0, l))); }); kind = dst::v16; break;
    case 384 + 95: each([&](unsigned l) { const float x = H(0, l); return hr(x - std::floor(x)); }); kind = dst::v16; break;
    case 384 + 96: each([&](unsigned l) { return hr(hw_sin(H(0, l))); }); kind = dst::v16; break;
    case 384 + 97: each([&](unsigned l) { return hr(hw_cos(H(0, l))); }); kind = dst::v16; break;
    case 384 + 101: {  // v_swap_b32
      if (in.srcs[0] < src::vgpr0) fail_instruction(c, in, "v_swap_b32 of a non-VGPR source");
      const unsigned a = in.srcs[0] - src::vgpr0;
      for (unsigned l = 0; l < wave_lanes; ++l)
        if ((mask >> l) & 1) std::swap(w.v(a, l), w.v(in.vdst, l));
      return;
    }
    case 384 + 105: each([&](unsigned l) { return std::uint32_t(std::uint16_t(~s.u16(0, l))); }); kind = dst::v16; break;
    case 384 + 106: each([&](unsigned l) { return std::uint32_t(std::int32_t(std::int16_t(s.u16(0, l)))); }); break;
    case 384 + 107: each([&](unsigned l) { return std::uint32_t(s.u16(0, l)); }); break;

    // ---- VOP3 only
    case 522: each([&](unsigned l) { return std::uint32_t(((I(0, l) << 8) >> 8) * ((I(1, l) << 8) >> 8) + I(2, l)); }); break;
    case 523: each([&](unsigned l) { return (U(0, l) & 0xFFFFFF) * (U(1, l) & 0xFFFFFF) + U(2, l); }); break;
    case 528: case 529:
      each([&](unsigned l) {
        const unsigned off = U(1, l) & 31, width = U(2, l) & 31;
        if (width == 0) return std::uint32_t(0);
        std::uint32_t v = (U(0, l) >> off) & (width == 32 ? ~0u : (1u << width) - 1);
        if (op == 529 && off + width < 32 && ((v >> (width - 1)) & 1)) v |= ~0u << width;
        return v;
      });
      break;
    case 530: each([&](unsigned l) { return (U(0, l) & U(1, l)) | (~U(0, l) & U(2, l)); }); break;
    case 531: each([&](unsigned l) { return fr(std::fma(F(0, l), F(1, l), F(2, l))); }); break;
    case 532: each([&](unsigned l) { return dr(std::fma(s.f64(0, l), s.f64(1, l), s.f64(2, l))); }); kind = dst::v64; break;
    case 534: each([&](unsigned l) { return std::uint32_t((std::uint64_t{U(0, l)} << 32 | U(1, l)) >> (U(2, l) & 31)); }); break;
    case 535: each([&](unsigned l) { return std::uint32_t((std::uint64_t{U(0, l)} << 32 | U(1, l)) >> (8 * (U(2, l) & 3))); }); break;
    case 537: each([&](unsigned l) { return fr(std::fmin(std::fmin(F(0, l), F(1, l)), F(2, l))); }); break;
    case 538: each([&](unsigned l) { return std::uint32_t(std::min({I(0, l), I(1, l), I(2, l)})); }); break;
    case 539: each([&](unsigned l) { return std::min({U(0, l), U(1, l), U(2, l)}); }); break;
    case 540: each([&](unsigned l) { return fr(std::fmax(std::fmax(F(0, l), F(1, l)), F(2, l))); }); break;
    case 541: each([&](unsigned l) { return std::uint32_t(std::max({I(0, l), I(1, l), I(2, l)})); }); break;
    case 542: each([&](unsigned l) { return std::max({U(0, l), U(1, l), U(2, l)}); }); break;
    case 543: each([&](unsigned l) { return fr(fmed3(F(0, l), F(1, l), F(2, l))); }); break;
    case 544: each([&](unsigned l) { return std::uint32_t(med3(I(0, l), I(1, l), I(2, l))); }); break;
    case 545: each([&](unsigned l) { return med3(U(0, l), U(1, l), U(2, l)); }); break;
    case 549: each([&](unsigned l) { const std::uint32_t a = U(0, l), b = U(1, l); return (a > b ? a - b : b - a) + U(2, l); }); break;
    case 551: each([&](unsigned l) { return fr(div_fixup(F(0, l), F(1, l), F(2, l))); }); break;
    case 567:  // v_div_fmas_f32: scales back by 2^+-64 where V_DIV_SCALE set VCC
      each([&](unsigned l) {
        const float f = std::fma(F(0, l), F(1, l), F(2, l));
        if (!((w.vcc() >> l) & 1)) return fr(f);
        return fr(std::ldexp(f, exponent_field(F(2, l)) > 127 ? 64 : -64));
      });
      break;
    case 576: each([&](unsigned l) { return U(0, l) ^ U(1, l) ^ U(2, l); }); break;
    case 580:  // v_perm_b32: each result byte picks a byte of {S0, S1} or a constant by S2's selector
      each([&](unsigned l) {
        const std::uint64_t v = std::uint64_t{U(0, l)} << 32 | U(1, l);
        const std::uint32_t sel = U(2, l);
        std::uint32_t out = 0;
        for (unsigned b = 0; b < 4; ++b) {
          const unsigned k = (sel >> (8 * b)) & 0xFF;
          std::uint32_t byte;
          if (k < 8) byte = (v >> (8 * k)) & 0xFF;
          else if (k < 12) byte = ((v >> (16 * (k - 8) + 15)) & 1) ? 0xFF : 0;  // the sign of a 16-bit half
          else byte = k == 12 ? 0 : 0xFF;
          out |= byte << (8 * b);
        }
        return out;
      });
      break;
    case 581: each([&](unsigned l) { return (U(0, l) ^ U(1, l)) + U(2, l); }); break;
    case 582: each([&](unsigned l) { return (U(0, l) << (U(1, l) & 31)) + U(2, l); }); break;
    case 583: each([&](unsigned l) { return (U(0, l) + U(1, l)) << (U(2, l) & 31); }); break;
    case 584: each([&](unsigned l) { return hr(float(std::fma(double(H(0, l)), double(H(1, l)), double(H(2, l))))); }); kind = dst::v16; break;
    case 585: each([&](unsigned l) { return hr(std::fmin(std::fmin(H(0, l), H(1, l)), H(2, l))); }); kind = dst::v16; break;
    case 588: each([&](unsigned l) { return hr(std::fmax(std::fmax(H(0, l), H(1, l)), H(2, l))); }); kind = dst::v16; break;
    case 591: each([&](unsigned l) { return hr(fmed3(H(0, l), H(1, l), H(2, l))); }); kind = dst::v16; break;
    case 597: each([&](unsigned l) { return U(0, l) + U(1, l) + U(2, l); }); break;
    case 598: each([&](unsigned l) { return (U(0, l) << (U(1, l) & 31)) | U(2, l); }); break;
    case 599: each([&](unsigned l) { return (U(0, l) & U(1, l)) | U(2, l); }); break;
    case 600: each([&](unsigned l) { return U(0, l) | U(1, l) | U(2, l); }); break;
    case 601: each([&](unsigned l) { return std::uint32_t(s.u16(0, l)) * s.u16(1, l) + U(2, l); }); break;
    case 602: each([&](unsigned l) { return std::uint32_t(std::int32_t(std::int16_t(s.u16(0, l))) * std::int16_t(s.u16(1, l)) + I(2, l)); }); break;
    case 603: case 604: {  // v_permlane16_b32 / v_permlanex16_b32 (the other row); opsel[0] = FI, opsel[1] = bound_ctrl
      if (in.srcs[0] < src::vgpr0) fail_instruction(c, in, "permlane of a non-VGPR source");
      const std::uint64_t sel = std::uint64_t{s.u32(2, 0)} << 32 | s.u32(1, 0);
      const bool fi = in.opsel & 1, bound = in.opsel & 2;
      each([&](unsigned l) -> std::uint64_t {
        const unsigned row = l / 16, other = op == 604 ? row ^ 1 : row;
        const unsigned from = other * 16 + unsigned((sel >> (4 * (l & 15))) & 15);
        if (!fi && !w.active(from)) return bound ? 0 : w.v(in.vdst, l);
        return w.v(in.srcs[0] - src::vgpr0, from);
      });
      break;
    }
    case 605: each([&](unsigned l) { return bit(l) ? s.u16(1, l) : s.u16(0, l); }); kind = dst::v16; break;
    case 606: each([&](unsigned l) { return fr(std::fmin(std::fmax(F(0, l), F(1, l)), F(2, l))); }); break;
    case 607: each([&](unsigned l) { return fr(std::fmax(std::fmin(F(0, l), F(1, l)), F(2, l))); }); break;
    case 610: each([&](unsigned l) { return std::min(std::max(U(0, l), U(1, l)), U(2, l)); }); break;
    case 611: each([&](unsigned l) { return std::max(std::min(U(0, l), U(1, l)), U(2, l)); }); break;
    case 612: each([&](unsigned l) { return std::uint32_t(std::min(std::max(I(0, l), I(1, l)), I(2, l))); }); break;
    case 613: each([&](unsigned l) { return std::uint32_t(std::max(std::min(I(0, l), I(1, l)), I(2, l))); }); break;
    case 764:
      each([&](unsigned l) {
        bool flag = false;
        const float v = div_scale(F(0, l), F(1, l), F(2, l), flag);
        bits |= std::uint32_t(flag) << l;
        return fr(v);
      });
      break;
    case 766: case 767:
      each([&](unsigned l) {
        const auto [v, carry] = mad64(l, op == 767);
        bits |= std::uint32_t(carry) << l;
        return v;
      });
      kind = dst::v64;
      break;
    case 768: case 769: case 770:
      each([&](unsigned l) {
        const std::uint64_t a = U(0, l), b = U(1, l);
        const std::uint64_t t = op == 768 ? a + b : op == 769 ? a - b : b - a;
        bits |= std::uint32_t((t >> 32) != 0) << l;
        return std::uint32_t(t);
      });
      break;
    case 771: each([&](unsigned l) { return std::uint32_t(std::uint16_t(s.u16(0, l) + s.u16(1, l))); }); kind = dst::v16; break;
    case 772: each([&](unsigned l) { return std::uint32_t(std::uint16_t(s.u16(0, l) - s.u16(1, l))); }); kind = dst::v16; break;
    case 773: each([&](unsigned l) { return std::uint32_t(std::uint16_t(s.u16(0, l) * s.u16(1, l))); }); kind = dst::v16; break;
    case 777: each([&](unsigned l) { return std::uint32_t(std::max(s.u16(0, l), s.u16(1, l))); }); kind = dst::v16; break;
    case 778: each([&](unsigned l) { return std::uint32_t(std::uint16_t(std::max(std::int16_t(s.u16(0, l)), std::int16_t(s.u16(1, l))))); }); kind = dst::v16; break;
    case 779: each([&](unsigned l) { return std::uint32_t(std::min(s.u16(0, l), s.u16(1, l))); }); kind = dst::v16; break;
    case 780: each([&](unsigned l) { return std::uint32_t(std::uint16_t(std::min(std::int16_t(s.u16(0, l)), std::int16_t(s.u16(1, l))))); }); kind = dst::v16; break;
    case 785: each([&](unsigned l) { return std::uint32_t(s.u16(0, l)) | std::uint32_t(s.u16(1, l)) << 16; }); break;
    case 796: each([&](unsigned l) { return fr(std::ldexp(F(0, l), std::clamp(I(1, l), -512, 512))); }); break;
    case 797: each([&](unsigned l) { return ((1u << (U(0, l) & 31)) - 1) << (U(1, l) & 31); }); break;
    case 798: each([&](unsigned l) { return std::uint32_t(std::popcount(U(0, l))) + U(1, l); }); break;
    case 799: each([&](unsigned l) { return std::uint32_t(std::popcount(U(0, l) & ((1u << l) - 1))) + U(1, l); }); break;
    case 800: each([&](unsigned l) { return U(1, l); }); break;  // wave32: no lanes 32-63 below this one
    case 805: each([&](unsigned l) { return std::uint32_t(I(0, l) - I(1, l)); }); break;
    case 806: each([&](unsigned l) { return std::uint32_t(I(0, l) + I(1, l)); }); break;
    case 807: each([&](unsigned l) { return dr(s.f64(0, l) + s.f64(1, l)); }); kind = dst::v64; break;
    case 808: each([&](unsigned l) { return dr(s.f64(0, l) * s.f64(1, l)); }); kind = dst::v64; break;
    case 809: each([&](unsigned l) { return dr(std::fmin(s.f64(0, l), s.f64(1, l))); }); kind = dst::v64; break;
    case 810: each([&](unsigned l) { return dr(std::fmax(s.f64(0, l), s.f64(1, l))); }); kind = dst::v64; break;
    case 811: each([&](unsigned l) { return dr(std::ldexp(s.f64(0, l), std::clamp(I(1, l), -2100, 2100))); }); kind = dst::v64; break;
    case 812: each([&](unsigned l) { return U(0, l) * U(1, l); }); break;
    case 813: each([&](unsigned l) { return std::uint32_t((std::uint64_t{U(0, l)} * U(1, l)) >> 32); }); break;
    case 814: each([&](unsigned l) { return std::uint32_t(std::uint64_t(std::int64_t(I(0, l)) * I(1, l)) >> 32); }); break;
    case 824: each([&](unsigned l) { return std::uint32_t(std::uint16_t(s.u16(1, l) << (s.u16(0, l) & 15))); }); kind = dst::v16; break;
    case 825: each([&](unsigned l) { return std::uint32_t(s.u16(1, l) >> (s.u16(0, l) & 15)); }); kind = dst::v16; break;
    case 826: each([&](unsigned l) { return std::uint32_t(std::uint16_t(std::int16_t(s.u16(1, l)) >> (s.u16(0, l) & 15))); }); kind = dst::v16; break;
    case 828: each([&](unsigned l) { return s.u64(1, l) << (U(0, l) & 63); }); kind = dst::v64; break;
    case 829: each([&](unsigned l) { return s.u64(1, l) >> (U(0, l) & 63); }); kind = dst::v64; break;
    case 830: each([&](unsigned l) { return std::uint64_t(std::int64_t(s.u64(1, l)) >> (U(0, l) & 63)); }); kind = dst::v64; break;
    case 864: {  // v_readlane_b32 sdst, vsrc, lane: any lane, whatever EXEC says
      if (in.srcs[0] < src::vgpr0) fail_instruction(c, in, "v_readlane_b32 of a non-VGPR source");
      w.write_sgpr(in.vdst, w.v(in.srcs[0] - src::vgpr0, s.u32(1, 0) & 31));
      return;
    }
    case 865:  // v_writelane_b32 vdst, ssrc, lane
      w.v(in.vdst, s.u32(1, 0) & 31) = s.u32(0, 0);
      return;
    case 866: each([&](unsigned l) { return std::uint32_t(s.u16(0, l) & s.u16(1, l)); }); kind = dst::v16; break;
    case 867: each([&](unsigned l) { return std::uint32_t(s.u16(0, l) | s.u16(1, l)); }); kind = dst::v16; break;
    case 868: each([&](unsigned l) { return std::uint32_t(s.u16(0, l) ^ s.u16(1, l)); }); kind = dst::v16; break;
    default:
      if (c.l.gen == isa_gen::gfx12 && op >= 557 && op <= 560) {  // v_minimum3/v_maximum3 f32, f16
        const bool max = op % 2 == 0, f16 = op >= 559;
        auto pick = [max](float a, float b) { return max ? ieee_maximum(a, b) : ieee_minimum(a, b); };
        if (f16) {
          each([&](unsigned l) { return hr(pick(pick(H(0, l), H(1, l)), H(2, l))); });
          kind = dst::v16;
        } else {
          each([&](unsigned l) { return fr(pick(pick(F(0, l), F(1, l)), F(2, l))); });
        }
        break;
      }
      if (c.l.gen == isa_gen::gfx12 && op >= 869 && op <= 872) {  // v_minimum/v_maximum f32, f16
        const bool max = op % 2 == 0, f16 = op >= 871;
        auto pick = [max](float a, float b) { return max ? ieee_maximum(a, b) : ieee_minimum(a, b); };
        if (f16) {
          each([&](unsigned l) { return hr(pick(H(0, l), H(1, l))); });
          kind = dst::v16;
        } else {
          each([&](unsigned l) { return fr(pick(F(0, l), F(1, l))); });
        }
        break;
      }
      if (c.l.gen == isa_gen::gfx12 && op >= 640 && op <= 648 && (op & 1) == 0) {  // v_s_*_f32: scalar, into an SGPR
        const float x = as_f32(scalar_source(w, in, in.srcs[0], operand_type::f32));
        const float v = op == 640 ? hw_exp2(x) : op == 642 ? hw_log2(x) : op == 644 ? hw_rcp(x) : op == 646 ? hw_rsq(x) : hw_sqrt(x);
        w.write_sgpr(in.vdst, bits_of(s.out_f32(perturb ? perturb_ulp(v, 1) : v)));
        return;
      }
      fail_instruction(c, in, "VALU opcode not implemented");
  }

  // Write back only the lanes that ran; the carry / flag SGPR gets 0 for the others.
  const unsigned d = in.vdst;
  for (unsigned l = 0; l < wave_lanes; ++l) {
    if (!((mask >> l) & 1)) continue;
    switch (kind) {
      case dst::v32: w.v(d, l) = std::uint32_t(r[l]); break;
      case dst::v64: w.v(d, l) = std::uint32_t(r[l]); w.v(d + 1, l) = std::uint32_t(r[l] >> 32); break;
      case dst::v16: {
        std::uint32_t& v = w.v(d, l);
        v = (in.opsel & 8) ? (v & 0xFFFF) | std::uint32_t(r[l]) << 16 : (v & 0xFFFF0000u) | (std::uint32_t(r[l]) & 0xFFFF);
        break;
      }
      default: break;
    }
  }
  if (in.has_sdst || op == 764) w.write_sgpr(op == 764 && !in.has_sdst ? src::vcc_lo : in.sdst, bits);
}

}  // namespace tg::emu::shader
