// exec_packed.cpp: VOP3P (packed 16-bit math, dot products, fma_mix) and VOPD dual issue (AMD RDNA3 /
// RDNA4 ISA reference guides, "VOP3P" and "VOPD"; opcode numbers: opcode_names.cpp).
#include <cmath>

#include "drivers/emu/shader/valu_operands.hpp"

namespace tg::emu::shader {

namespace {

std::uint16_t half_of(std::uint32_t v, bool hi) { return std::uint16_t(hi ? v >> 16 : v); }

float neg_if(float f, bool n) { return n ? -f : f; }

}  // namespace

void exec_vop3p(exec_context& c, wave& w, const instruction& in) {
  const valu_operands s(c, w, in);
  const std::uint32_t mask = w.exec();
  const bool g12 = c.l.gen == isa_gen::gfx12;
  std::array<std::uint32_t, wave_lanes> r{};
  // Half `hi` of source i: opsel picks the low result's half, opsel_hi the high result's.
  auto half = [&](unsigned i, unsigned l, bool hi) {
    const bool sel = hi ? (in.opsel_hi >> i) & 1 : (in.opsel >> i) & 1;
    return half_of(s.u32(i, l, operand_type::f16), sel);
  };
  auto fhalf = [&](unsigned i, unsigned l, bool hi) {
    return neg_if(f16_to_f32(half(i, l, hi)), hi ? (in.neg_hi >> i) & 1 : (in.neg >> i) & 1);
  };
  auto pk = [&](auto fn) {  // a 16-bit op applied to both halves
    for (unsigned l = 0; l < wave_lanes; ++l)
      if ((mask >> l) & 1) r[l] = std::uint32_t(std::uint16_t(fn(l, false))) | std::uint32_t(std::uint16_t(fn(l, true))) << 16;
  };
  auto each = [&](auto fn) {
    for (unsigned l = 0; l < wave_lanes; ++l)
      if ((mask >> l) & 1) r[l] = fn(l);
  };
  auto hf = [&](float f) { return f32_to_f16(in.clamp ? std::fmin(std::fmax(f, 0.0f), 1.0f) : f); };
  switch (in.op) {
    case 1: pk([&](unsigned l, bool h) { return half(0, l, h) * half(1, l, h); }); break;
    case 2: pk([&](unsigned l, bool h) { return std::int16_t(half(0, l, h)) + std::int16_t(half(1, l, h)); }); break;
    case 3: pk([&](unsigned l, bool h) { return std::int16_t(half(0, l, h)) - std::int16_t(half(1, l, h)); }); break;
    case 4: pk([&](unsigned l, bool h) { return half(1, l, h) << (half(0, l, h) & 15); }); break;
    case 5: pk([&](unsigned l, bool h) { return half(1, l, h) >> (half(0, l, h) & 15); }); break;
    case 6: pk([&](unsigned l, bool h) { return std::int16_t(half(1, l, h)) >> (half(0, l, h) & 15); }); break;
    case 7: pk([&](unsigned l, bool h) { return std::max(std::int16_t(half(0, l, h)), std::int16_t(half(1, l, h))); }); break;
    case 8: pk([&](unsigned l, bool h) { return std::min(std::int16_t(half(0, l, h)), std::int16_t(half(1, l, h))); }); break;
    case 9: pk([&](unsigned l, bool h) { return half(0, l, h) * half(1, l, h) + half(2, l, h); }); break;
    case 10: pk([&](unsigned l, bool h) { return half(0, l, h) + half(1, l, h); }); break;
    case 11: pk([&](unsigned l, bool h) { return half(0, l, h) - half(1, l, h); }); break;
    case 12: pk([&](unsigned l, bool h) { return std::max(half(0, l, h), half(1, l, h)); }); break;
    case 13: pk([&](unsigned l, bool h) { return std::min(half(0, l, h), half(1, l, h)); }); break;
    case 14: pk([&](unsigned l, bool h) { return hf(float(std::fma(double(fhalf(0, l, h)), double(fhalf(1, l, h)), double(fhalf(2, l, h))))); }); break;
    case 15: pk([&](unsigned l, bool h) { return hf(fhalf(0, l, h) + fhalf(1, l, h)); }); break;
    case 16: pk([&](unsigned l, bool h) { return hf(fhalf(0, l, h) * fhalf(1, l, h)); }); break;
    case 19:  // v_dot2_f32_f16: D = S0.lo * S1.lo + S0.hi * S1.hi + S2 (f32)
      each([&](unsigned l) {
        const double acc = double(fhalf(0, l, false)) * fhalf(1, l, false) + double(fhalf(0, l, true)) * fhalf(1, l, true);
        return bits_of(float(acc + double(neg_if(as_f32(s.u32(2, l, operand_type::f32)), in.neg & 4))));
      });
      break;
    case 22: case 23:  // v_dot4_i32_iu8 / v_dot4_u32_u8: on iu8, NEG[0] / NEG[1] mean "src0 / src1 are signed"
      each([&](unsigned l) {
        const std::uint32_t a = s.u32(0, l), b = s.u32(1, l);
        const bool sa = in.op == 22 && (in.neg & 1), sb = in.op == 22 && (in.neg & 2);
        std::int64_t acc = in.op == 22 ? std::int64_t(std::int32_t(s.u32(2, l))) : std::int64_t(s.u32(2, l));
        for (unsigned k = 0; k < 4; ++k) {
          const std::uint32_t x = (a >> (8 * k)) & 0xFF, y = (b >> (8 * k)) & 0xFF;
          acc += std::int64_t(sa ? std::int32_t(std::int8_t(x)) : std::int32_t(x)) *
                 std::int64_t(sb ? std::int32_t(std::int8_t(y)) : std::int32_t(y));
        }
        if (in.clamp) acc = in.op == 22 ? std::clamp<std::int64_t>(acc, INT32_MIN, INT32_MAX) : std::min<std::int64_t>(acc, UINT32_MAX);
        return std::uint32_t(acc);
      });
      break;
    case 24: case 25:  // v_dot8_i32_iu4 / v_dot8_u32_u4
      each([&](unsigned l) {
        const std::uint32_t a = s.u32(0, l), b = s.u32(1, l);
        const bool sa = in.op == 24 && (in.neg & 1), sb = in.op == 24 && (in.neg & 2);
        std::int64_t acc = in.op == 24 ? std::int64_t(std::int32_t(s.u32(2, l))) : std::int64_t(s.u32(2, l));
        for (unsigned k = 0; k < 8; ++k) {
          const std::int32_t x = std::int32_t((a >> (4 * k)) & 15), y = std::int32_t((b >> (4 * k)) & 15);
          acc += std::int64_t(sa && x >= 8 ? x - 16 : x) * std::int64_t(sb && y >= 8 ? y - 16 : y);
        }
        return std::uint32_t(acc);
      });
      break;
    case 32: case 33: case 34: {  // v_fma_mix*: each source f32, or the f16 half opsel picks when opsel_hi is set
      auto mix = [&](unsigned i, unsigned l) {
        float f = ((in.opsel_hi >> i) & 1) ? f16_to_f32(half_of(s.u32(i, l, operand_type::f16), (in.opsel >> i) & 1))
                                           : as_f32(s.u32(i, l, operand_type::f32));
        if ((in.neg_hi >> i) & 1) f = std::fabs(f);  // neg_hi is abs on fma_mix
        return neg_if(f, (in.neg >> i) & 1);
      };
      each([&](unsigned l) -> std::uint32_t {
        const float v = std::fma(mix(0, l), mix(1, l), mix(2, l));
        const float cv = in.clamp ? std::fmin(std::fmax(v, 0.0f), 1.0f) : v;
        if (in.op == 32) return bits_of(cv);
        const std::uint32_t old = w.v(in.vdst, l);
        return in.op == 33 ? (old & 0xFFFF0000u) | f32_to_f16(cv) : (old & 0xFFFF) | std::uint32_t(f32_to_f16(cv)) << 16;
      });
      break;
    }
    default:
      if ((in.op == 17 || in.op == 18) && !g12) {
        pk([&](unsigned l, bool h) { return hf(in.op == 17 ? std::fmin(fhalf(0, l, h), fhalf(1, l, h)) : std::fmax(fhalf(0, l, h), fhalf(1, l, h))); });
        break;
      }
      if ((in.op == 27 || in.op == 28) && g12) {
        pk([&](unsigned l, bool h) { return hf(in.op == 27 ? std::fmin(fhalf(0, l, h), fhalf(1, l, h)) : std::fmax(fhalf(0, l, h), fhalf(1, l, h))); });
        break;
      }
      fail_instruction(c, in, "VOP3P opcode not implemented");
  }
  for (unsigned l = 0; l < wave_lanes; ++l)
    if ((mask >> l) & 1) w.v(in.vdst, l) = r[l];
}

namespace {

// One VOPD half for one lane (opcodes: the VOPD table of opcode_names.cpp).
bool vopd_half(unsigned op, std::uint32_t a, std::uint32_t b, std::uint32_t d, std::uint32_t k, bool vcc_bit,
               std::uint32_t& out) {
  const float fa = as_f32(a), fb = as_f32(b);
  switch (op) {
    case 0: out = bits_of(std::fma(fa, fb, as_f32(d))); return true;
    case 1: out = bits_of(std::fma(fa, fb, as_f32(k))); return true;
    case 2: out = bits_of(std::fma(fa, as_f32(k), fb)); return true;
    case 3: out = bits_of(fa * fb); return true;
    case 4: out = bits_of(fa + fb); return true;
    case 5: out = bits_of(fa - fb); return true;
    case 6: out = bits_of(fb - fa); return true;
    case 7: out = bits_of(fa == 0 || fb == 0 ? 0.0f : fa * fb); return true;
    case 8: out = a; return true;
    case 9: out = vcc_bit ? b : a; return true;
    case 10: out = bits_of(std::fmax(fa, fb)); return true;
    case 11: out = bits_of(std::fmin(fa, fb)); return true;
    case 12:
      out = bits_of(dot2_f16(a, b, as_f32(d)));
      return true;
    case 16: out = a + b; return true;
    case 17: out = b << (a & 31); return true;
    case 18: out = a & b; return true;
    default: return false;
  }
}

}  // namespace

void exec_vopd(exec_context& c, wave& w, const instruction& in) {
  // Both halves read all their sources before either writes (RDNA3 ISA guide, "VOPD"), which is
  // what computing both into x / y first gives.
  const std::uint32_t mask = w.exec(), vcc = w.vcc();
  std::array<std::uint32_t, wave_lanes> x{}, y{};
  // FLOAT_MODE's f32 denormal flushing (valu_operands.hpp) applies to the float halves only.
  const bool flush_in = c.mode.denorm32 == 0 || c.mode.denorm32 == 2, flush_out = c.mode.denorm32 <= 1;
  auto is_float = [](unsigned op) { return op <= 7 || op == 10 || op == 11; };
  auto flush = [](std::uint32_t v) { return (v & 0x7F800000u) == 0 ? v & 0x80000000u : v; };
  auto source = [&](unsigned code, unsigned l) {
    return code >= src::vgpr0 ? w.v(code - src::vgpr0, l) : scalar_source(w, in, code, operand_type::f32);
  };
  auto run_half = [&](unsigned op, unsigned s0, unsigned s1, std::uint32_t d, unsigned l, bool vbit, std::uint32_t& out) {
    std::uint32_t a = source(s0, l), b = source(s1, l), k = in.literal;
    const bool f = is_float(op);
    if (f && flush_in) { a = flush(a); b = flush(b); d = flush(d); k = flush(k); }
    const bool ok = vopd_half(op, a, b, d, k, vbit, out);
    if (f && flush_out) out = flush(out);
    return ok;
  };
  for (unsigned l = 0; l < wave_lanes; ++l) {
    if (!((mask >> l) & 1)) continue;
    const bool vbit = (vcc >> l) & 1;
    if (in.op > 13 || !run_half(in.op, in.srcs[0], in.srcs[1], w.v(in.vdst, l), l, vbit, x[l]))
      fail_instruction(c, in, "VOPD X opcode not implemented");
    if (!run_half(in.opy, in.srcsy[0], in.srcsy[1], w.v(in.vdsty, l), l, vbit, y[l]))
      fail_instruction(c, in, "VOPD Y opcode not implemented");
  }
  for (unsigned l = 0; l < wave_lanes; ++l) {
    if (!((mask >> l) & 1)) continue;
    w.v(in.vdst, l) = x[l];
    w.v(in.vdsty, l) = y[l];
  }
}

}  // namespace tg::emu::shader
