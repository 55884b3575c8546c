// decoder.cpp: the field layouts of decoder.hpp (AMD RDNA3 / RDNA4 ISA reference guides, "Microcode Formats").
#include "drivers/emu/shader/decoder.hpp"

#include <algorithm>
#include <sstream>

namespace tg::emu::shader {

namespace {

constexpr std::uint32_t bits(std::uint32_t w, unsigned lo, unsigned width) { return (w >> lo) & ((1u << width) - 1); }
constexpr std::int32_t sext(std::uint32_t v, unsigned width) {
  const std::uint32_t m = 1u << (width - 1);
  return std::int32_t((v ^ m) - m);
}

// VOP3 opcodes whose bits [14:8] are an SGPR destination instead of opsel/abs (the VOP3SD encoding):
// v_add/sub/subrev_co_ci_u32 (VOP2 32-34 + 256), v_div_scale_f32/f64, v_mad_u64_u32, v_mad_i64_i32,
// v_add/sub/subrev_co_u32 (764-770). Same numbers on gfx11 and gfx12.
bool is_vop3sd(unsigned op) { return (op >= 288 && op <= 290) || (op >= 764 && op <= 770); }

void take_literal(instruction& in, std::span<const std::uint32_t> w, unsigned at) {
  in.has_literal = true;
  in.literal = w[at];
  in.dwords = std::uint8_t(at + 1);
}

bool names_literal(const instruction& in, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    if (in.srcs[i] == src::literal) return true;
  return false;
}

// The DPP16 or DPP8 dword `d` (RDNA3 ISA guide, "DPP16" / "DPP8"): it carries the real src0 VGPR.
void take_dpp(instruction& in, std::uint32_t d) {
  in.has_dpp = true;
  if (in.srcs[0] == src::dpp16) {
    in.dpp.ctrl = std::uint16_t(bits(d, 8, 9));
    in.dpp.fi = bits(d, 18, 1);
    in.dpp.bound_ctrl = bits(d, 19, 1);
    in.neg |= std::uint8_t(bits(d, 20, 1) | bits(d, 22, 1) << 1);
    in.abs |= std::uint8_t(bits(d, 21, 1) | bits(d, 23, 1) << 1);
    in.dpp.bank_mask = std::uint8_t(bits(d, 24, 4));
    in.dpp.row_mask = std::uint8_t(bits(d, 28, 4));
  } else {
    in.dpp.dpp8 = true;
    in.dpp.fi = in.srcs[0] == src::dpp8_fi;
    in.dpp.lane_sel = bits(d, 8, 24);
  }
  in.srcs[0] = std::uint16_t(src::vgpr0 + bits(d, 0, 8));
}

// VOP1 / VOP2 / VOPC (32-bit forms), normalised to VOP3.
void decode_vop32(instruction& in, std::span<const std::uint32_t> w) {
  const std::uint32_t d = w[0];
  in.srcs[0] = std::uint16_t(bits(d, 0, 9));
  if (in.fam == family::vop1) {
    in.op = std::uint16_t(384 + bits(d, 9, 8));
    in.vdst = std::uint16_t(bits(d, 17, 8));
  } else if (in.fam == family::vopc) {
    in.op = std::uint16_t(bits(d, 17, 8));
    in.srcs[1] = std::uint16_t(src::vgpr0 + bits(d, 9, 8));
    in.sdst = src::vcc_lo;  // cmpx writes EXEC (op >= 128): the executor knows
  } else {
    const unsigned op2 = bits(d, 25, 6);
    in.op = std::uint16_t(256 + op2);
    in.vdst = std::uint16_t(bits(d, 17, 8));
    in.srcs[1] = std::uint16_t(src::vgpr0 + bits(d, 9, 8));
    // v_cndmask_b32 (1) reads VCC; the carry forms (32-34) read and write it: the VOP3 form's src2/sdst.
    if (op2 == 1 || (op2 >= 32 && op2 <= 34)) in.srcs[2] = src::vcc_lo;
    if (op2 >= 32 && op2 <= 34) { in.sdst = src::vcc_lo; in.has_sdst = true; }
    // v_fmamk (44, 55: D = S0 * K + S1) and v_fmaak (45, 56: D = S0 * S1 + K) always carry K.
    if (op2 == 44 || op2 == 45 || op2 == 55 || op2 == 56) { take_literal(in, w, 1); return; }
  }
  if (in.srcs[0] == src::dpp16 || in.srcs[0] == src::dpp8 || in.srcs[0] == src::dpp8_fi) {
    take_dpp(in, w[1]);
    in.dwords = 2;
  } else if (in.srcs[0] == src::literal) {
    take_literal(in, w, 1);
  }
}

void decode_vop3(instruction& in, std::span<const std::uint32_t> w) {
  const std::uint32_t d = w[0], e = w[1];
  in.op = std::uint16_t(bits(d, 16, 10));
  in.vdst = std::uint16_t(bits(d, 0, 8));
  in.clamp = bits(d, 15, 1);
  if (is_vop3sd(in.op)) {
    in.sdst = std::uint16_t(bits(d, 8, 7));
    in.has_sdst = true;
  } else {
    in.opsel = std::uint8_t(bits(d, 11, 4));
    in.abs = std::uint8_t(bits(d, 8, 3));
  }
  in.srcs = {std::uint16_t(bits(e, 0, 9)), std::uint16_t(bits(e, 9, 9)), std::uint16_t(bits(e, 18, 9))};
  in.omod = std::uint8_t(bits(e, 27, 2));
  in.neg = std::uint8_t(bits(e, 29, 3));
  in.dwords = 2;
  if (in.srcs[0] == src::dpp16 || in.srcs[0] == src::dpp8 || in.srcs[0] == src::dpp8_fi) {
    take_dpp(in, w[2]);
    in.dwords = 3;
  } else if (names_literal(in, 3)) {
    take_literal(in, w, 2);
  }
}

void decode_vop3p(instruction& in, std::span<const std::uint32_t> w) {
  const std::uint32_t d = w[0], e = w[1];
  in.op = std::uint16_t(bits(d, 16, 7));
  in.vdst = std::uint16_t(bits(d, 0, 8));
  in.neg_hi = std::uint8_t(bits(d, 8, 3));
  in.opsel = std::uint8_t(bits(d, 11, 3));
  in.clamp = bits(d, 15, 1);
  in.srcs = {std::uint16_t(bits(e, 0, 9)), std::uint16_t(bits(e, 9, 9)), std::uint16_t(bits(e, 18, 9))};
  in.opsel_hi = std::uint8_t(bits(e, 27, 2) | bits(d, 14, 1) << 2);
  in.neg = std::uint8_t(bits(e, 29, 3));
  in.dwords = 2;
  if (names_literal(in, 3)) take_literal(in, w, 2);
}

void decode_vopd(instruction& in, std::span<const std::uint32_t> w) {
  const std::uint32_t d = w[0], e = w[1];
  in.op = std::uint16_t(bits(d, 22, 4));
  in.opy = std::uint16_t(bits(d, 17, 5));
  in.srcs[0] = std::uint16_t(bits(d, 0, 9));
  in.srcs[1] = std::uint16_t(src::vgpr0 + bits(d, 9, 8));
  in.srcsy[0] = std::uint16_t(bits(e, 0, 9));
  in.srcsy[1] = std::uint16_t(src::vgpr0 + bits(e, 9, 8));
  in.vdst = std::uint16_t(bits(e, 24, 8));
  // VDSTY's low bit is implied: the two destinations have opposite parity (RDNA3 ISA guide, "VOPD").
  in.vdsty = std::uint16_t(bits(e, 17, 7) << 1 | ((in.vdst & 1) ^ 1));
  in.dwords = 2;
  const auto uses_k = [](unsigned op) { return op == 1 || op == 2; };  // FMAAK / FMAMK
  if (in.srcs[0] == src::literal || in.srcsy[0] == src::literal || uses_k(in.op) || uses_k(in.opy))
    take_literal(in, w, 2);
}

void decode_smem(isa_gen gen, instruction& in, std::span<const std::uint32_t> w) {
  const std::uint32_t d = w[0], e = w[1];
  in.op = std::uint16_t(gen == isa_gen::gfx11 ? bits(d, 18, 8) : bits(d, 13, 6));
  in.sdst = std::uint16_t(bits(d, 6, 7));
  in.sbase = std::uint16_t(bits(d, 0, 6) * 2);
  in.glc = gen == isa_gen::gfx11 && bits(d, 14, 1);
  in.soffset = std::uint16_t(bits(e, 25, 7));
  in.offset = gen == isa_gen::gfx11 ? sext(bits(e, 0, 21), 21) : sext(bits(e, 0, 24), 24);
  in.dwords = 2;
}

void decode_ds(isa_gen gen, instruction& in, std::span<const std::uint32_t> w) {
  const std::uint32_t d = w[0], e = w[1];
  in.op = std::uint16_t(bits(d, 18, 8));
  in.gds = gen == isa_gen::gfx11 && bits(d, 17, 1);
  in.offset0 = std::uint8_t(bits(d, 0, 8));
  in.offset1 = std::uint8_t(bits(d, 8, 8));
  in.addr = std::uint16_t(bits(e, 0, 8));
  in.data0 = std::uint16_t(bits(e, 8, 8));
  in.data1 = std::uint16_t(bits(e, 16, 8));
  in.vdst = std::uint16_t(bits(e, 24, 8));
  in.dwords = 2;
}

void decode_flat11(instruction& in, std::span<const std::uint32_t> w) {
  const std::uint32_t d = w[0], e = w[1];
  const unsigned seg = bits(d, 16, 2);
  if (seg == 3) throw decode_error("FLAT encoding with reserved segment 3");
  in.fam = seg == 0 ? family::flat : seg == 1 ? family::scratch : family::global;
  in.op = std::uint16_t(bits(d, 18, 7));
  in.glc = bits(d, 14, 1);
  // 13-bit signed for GLOBAL and SCRATCH, 12-bit unsigned for FLAT (RDNA3 ISA guide, "FLAT").
  in.offset = in.fam == family::flat ? std::int32_t(bits(d, 0, 12)) : sext(bits(d, 0, 13), 13);
  in.addr = std::uint16_t(bits(e, 0, 8));
  in.data0 = std::uint16_t(bits(e, 8, 8));
  in.saddr = std::uint16_t(bits(e, 16, 7));
  in.sve = bits(e, 23, 1);
  in.vdst = std::uint16_t(bits(e, 24, 8));
  in.dwords = 2;
}

void decode_flat12(instruction& in, std::span<const std::uint32_t> w) {
  const std::uint32_t d = w[0], e = w[1], f = w[2];
  const unsigned kind = bits(d, 24, 8);
  in.fam = kind == 0xEC ? family::flat : kind == 0xED ? family::scratch : family::global;
  in.op = std::uint16_t(bits(d, 14, 8));
  in.saddr = std::uint16_t(bits(d, 0, 7));
  in.vdst = std::uint16_t(bits(e, 0, 8));
  in.sve = bits(e, 17, 1);
  in.glc = bits(e, 20, 1);  // TH bit 0: TH_ATOMIC_RETURN for atomics
  in.data0 = std::uint16_t(bits(e, 23, 8));
  in.addr = std::uint16_t(bits(f, 0, 8));
  in.offset = sext(bits(f, 8, 24), 24);
  in.dwords = 3;
}

}  // namespace

instruction decode(isa_gen gen, std::span<const std::uint32_t> w) {
  instruction in;
  const std::uint32_t d = w[0];
  const bool g11 = gen == isa_gen::gfx11;
  if ((d >> 31) == 0) {
    in.fam = (d >> 25) == 0x3F ? family::vop1 : (d >> 25) == 0x3E ? family::vopc : family::vop2;
    decode_vop32(in, w);
  } else if ((d >> 30) == 2) {
    const unsigned top9 = d >> 23;
    if (top9 == 0x17D) {
      in.fam = family::sop1;
      in.op = std::uint16_t(bits(d, 8, 8));
      in.sdst = std::uint16_t(bits(d, 16, 7));
      in.srcs[0] = std::uint16_t(bits(d, 0, 8));
    } else if (top9 == 0x17E || top9 == 0x17F) {
      in.fam = top9 == 0x17E ? family::sopc : family::sopp;
      in.op = std::uint16_t(bits(d, 16, 7));
      in.srcs = {std::uint16_t(bits(d, 0, 8)), std::uint16_t(bits(d, 8, 8)), 0};
      in.simm16 = sext(bits(d, 0, 16), 16);
      if (in.fam == family::sopp) in.srcs = {};
    } else if ((d >> 28) == 0xB) {
      in.fam = family::sopk;
      in.op = std::uint16_t(bits(d, 23, 5));
      in.sdst = std::uint16_t(bits(d, 16, 7));
      in.simm16 = sext(bits(d, 0, 16), 16);
    } else {
      in.fam = family::sop2;
      in.op = std::uint16_t(bits(d, 23, 7));
      in.sdst = std::uint16_t(bits(d, 16, 7));
      in.srcs = {std::uint16_t(bits(d, 0, 8)), std::uint16_t(bits(d, 8, 8)), 0};
    }
    // gfx12's s_fmaak_f32 (69: D = S0 * S1 + K) and s_fmamk_f32 (70: D = S0 * K + S1) always carry K.
    const bool scalar_k = !g11 && in.fam == family::sop2 && (in.op == 69 || in.op == 70);
    if (scalar_k || (in.fam != family::sopp && in.fam != family::sopk && names_literal(in, 2))) take_literal(in, w, 1);
  } else {
    const unsigned top6 = d >> 26, top8 = d >> 24;
    if (top6 == 0b110101) {
      in.fam = family::vop3;
      decode_vop3(in, w);
    } else if (top8 == 0xCC) {
      in.fam = family::vop3p;
      decode_vop3p(in, w);
    } else if (top6 == 0b110010) {
      in.fam = family::vopd;
      decode_vopd(in, w);
    } else if (top6 == 0b111101) {
      in.fam = family::smem;
      decode_smem(gen, in, w);
    } else if (top6 == 0b110110) {
      in.fam = family::ds;
      decode_ds(gen, in, w);
    } else if (g11 && top6 == 0b110111) {
      decode_flat11(in, w);
    } else if (g11 && top6 == 0b111000) {
      in.fam = family::mubuf;
      in.op = std::uint16_t(bits(d, 18, 8));
      in.dwords = 2;
    } else if (!g11 && (top8 == 0xEC || top8 == 0xED || top8 == 0xEE)) {
      decode_flat12(in, w);
    } else {
      std::ostringstream s;
      s << "no gfx" << (g11 ? "11" : "12") << " encoding family this interpreter decodes starts with 0x" << std::hex
        << std::uppercase << d << " (MTBUF, MIMG, EXP, LDSDIR, VINTERP or VBUFFER?)";
      throw decode_error(s.str());
    }
  }
  for (unsigned i = 0; i < in.dwords && i < in.raw.size(); ++i) in.raw[i] = w[i];
  return in;
}

std::string_view family_name(family f) {
  static constexpr std::string_view names[] = {"SOP2", "SOP1", "SOPC", "SOPK", "SOPP",  "SMEM",   "VOP1",    "VOP2", "VOPC",
                                               "VOP3", "VOP3P", "VOPD", "DS",   "FLAT", "GLOBAL", "SCRATCH", "MUBUF"};
  return names[unsigned(f)];
}

std::string mnemonic_of(isa_gen gen, family f, unsigned op) {
  if (f == family::mubuf) return op == 43 ? "buffer_gl0_inv" : op == 44 ? "buffer_gl1_inv" : "";
  const auto t = opcode_names(gen, f);
  const auto it = std::lower_bound(t.begin(), t.end(), op, [](const op_name& e, unsigned o) { return e.op < o; });
  if (it == t.end() || it->op != op) return "";
  std::string n(it->name);
  if (f == family::flat) n.replace(0, 6, "flat");  // the GLOBAL table's "global_..."
  return n;
}

std::string mnemonic(isa_gen gen, const instruction& in) {
  std::string n = mnemonic_of(gen, in.fam, in.op);
  if (n.empty()) {  // the family's own opcode number (VALU ops are held in the VOP3 space)
    const unsigned own = in.fam == family::vop1 ? in.op - 384 : in.fam == family::vop2 ? in.op - 256 : in.op;
    n = std::string(family_name(in.fam)) + " opcode " + std::to_string(own);
  }
  if (in.fam == family::vopd) {
    std::string y = mnemonic_of(gen, in.fam, in.opy);
    n += " :: " + (y.empty() ? "VOPD opcode " + std::to_string(in.opy) : y);
  }
  return n;
}

std::string raw_words(const instruction& in) {
  std::ostringstream s;
  s << std::hex << std::uppercase;
  for (unsigned i = 0; i < in.dwords; ++i) {
    s.width(8);
    s.fill('0');
    s << in.raw[i] << (i + 1 < in.dwords ? " " : "");
  }
  return s.str();
}

}  // namespace tg::emu::shader
