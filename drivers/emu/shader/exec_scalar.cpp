// exec_scalar.cpp: SOP1, SOP2, SOPC, SOPK and SOPP (semantics: AMD RDNA3 / RDNA4 ISA reference guides,
// chapter "Scalar ALU Operations" and "Scalar Program Control"; opcode numbers: opcode_names.cpp).
#include <bit>
#include <cmath>
#include <cstring>

#include "drivers/emu/shader/executor.hpp"
#include "drivers/emu/shader/float_bits.hpp"

namespace tg::emu::shader {

namespace {

std::uint32_t bfe32(std::uint32_t v, std::uint32_t ctl, bool sign) {
  const unsigned off = ctl & 31, width = (ctl >> 16) & 0x7F;
  if (width == 0) return 0;
  const std::uint32_t r = width >= 32 ? v >> off : (v >> off) & ((1u << width) - 1);
  if (!sign || width >= 32) return r;
  const std::uint32_t m = 1u << (width - 1);
  return (r ^ m) - m;
}

void exec_sop2(exec_context& c, wave& w, const instruction& in) {
  const std::uint32_t a = scalar_source(w, in, in.srcs[0]), b = scalar_source(w, in, in.srcs[1]);
  const std::uint64_t a64 = scalar_source64(w, in, in.srcs[0]), b64 = scalar_source64(w, in, in.srcs[1]);
  const unsigned d = in.sdst;
  auto set32 = [&](std::uint32_t r) { w.write_sgpr(d, r); w.scc = r != 0; };
  auto set64 = [&](std::uint64_t r) { w.write_sgpr64(d, r); w.scc = r != 0; };
  switch (in.op) {
    case 0: { const std::uint64_t r = std::uint64_t{a} + b; w.write_sgpr(d, std::uint32_t(r)); w.scc = r >> 32; return; }
    case 1: w.write_sgpr(d, a - b); w.scc = b > a; return;
    case 2: case 3: {
      const std::int64_t r = in.op == 2 ? std::int64_t(std::int32_t(a)) + std::int32_t(b)
                                        : std::int64_t(std::int32_t(a)) - std::int32_t(b);
      w.write_sgpr(d, std::uint32_t(r));
      w.scc = r != std::int64_t(std::int32_t(std::uint32_t(r)));
      return;
    }
    case 4: { const std::uint64_t r = std::uint64_t{a} + b + w.scc; w.write_sgpr(d, std::uint32_t(r)); w.scc = r >> 32; return; }
    case 5: { const std::uint64_t r = std::uint64_t{a} - b - w.scc; w.write_sgpr(d, std::uint32_t(r)); w.scc = (r >> 32) != 0; return; }
    case 6: { const std::int32_t r = std::int32_t(a) - std::int32_t(b); set32(std::uint32_t(r < 0 ? -r : r)); return; }
    case 8: set32(a << (b & 31)); return;
    case 9: set64(a64 << (b & 63)); return;
    case 10: set32(a >> (b & 31)); return;
    case 11: set64(a64 >> (b & 63)); return;
    case 12: set32(std::uint32_t(std::int32_t(a) >> (b & 31))); return;
    case 13: set64(std::uint64_t(std::int64_t(a64) >> (b & 63))); return;
    case 14: case 15: case 16: case 17: {
      const std::uint64_t r = (std::uint64_t{a} << (in.op - 13)) + b;
      w.write_sgpr(d, std::uint32_t(r));
      w.scc = r >> 32;
      return;
    }
    case 18: w.write_sgpr(d, std::int32_t(a) < std::int32_t(b) ? a : b); w.scc = std::int32_t(a) < std::int32_t(b); return;
    case 19: w.write_sgpr(d, a < b ? a : b); w.scc = a < b; return;
    case 20: w.write_sgpr(d, std::int32_t(a) > std::int32_t(b) ? a : b); w.scc = std::int32_t(a) > std::int32_t(b); return;
    case 21: w.write_sgpr(d, a > b ? a : b); w.scc = a > b; return;
    case 22: set32(a & b); return;
    case 23: set64(a64 & b64); return;
    case 24: set32(a | b); return;
    case 25: set64(a64 | b64); return;
    case 26: set32(a ^ b); return;
    case 27: set64(a64 ^ b64); return;
    case 28: set32(~(a & b)); return;
    case 30: set32(~(a | b)); return;
    case 32: set32(~(a ^ b)); return;
    case 34: set32(a & ~b); return;
    case 35: set64(a64 & ~b64); return;
    case 36: set32(a | ~b); return;
    case 37: set64(a64 | ~b64); return;
    case 38: set32(bfe32(a, b, false)); return;
    case 39: set32(bfe32(a, b, true)); return;
    case 42: w.write_sgpr(d, ((1u << (a & 31)) - 1) << (b & 31)); return;
    case 44: w.write_sgpr(d, a * b); return;
    case 45: w.write_sgpr(d, std::uint32_t((std::uint64_t{a} * b) >> 32)); return;
    case 46: w.write_sgpr(d, std::uint32_t(std::uint64_t(std::int64_t(std::int32_t(a)) * std::int32_t(b)) >> 32)); return;
    case 48: w.write_sgpr(d, w.scc ? a : b); return;
    case 49: w.write_sgpr64(d, w.scc ? a64 : b64); return;
    case 50: w.write_sgpr(d, (a & 0xFFFF) | b << 16); return;
    case 51: w.write_sgpr(d, (a & 0xFFFF) | (b & 0xFFFF0000u)); return;
    case 52: w.write_sgpr(d, a >> 16 | (b & 0xFFFF0000u)); return;
    case 53: w.write_sgpr(d, a >> 16 | b << 16); return;
    default: break;
  }
  if (c.l.gen == isa_gen::gfx12) {
    const float fa = as_f32(a), fb = as_f32(b);
    switch (in.op) {
      case 64: w.write_sgpr(d, bits_of(fa + fb)); return;
      case 65: w.write_sgpr(d, bits_of(fa - fb)); return;
      case 66: w.write_sgpr(d, bits_of(std::fmin(fa, fb))); return;
      case 67: w.write_sgpr(d, bits_of(std::fmax(fa, fb))); return;
      case 68: w.write_sgpr(d, bits_of(fa * fb)); return;
      case 69: w.write_sgpr(d, bits_of(std::fma(fa, fb, as_f32(in.literal)))); return;  // s_fmaak_f32
      case 70: w.write_sgpr(d, bits_of(std::fma(fa, as_f32(in.literal), fb))); return;  // s_fmamk_f32
      case 71: w.write_sgpr(d, bits_of(std::fma(fa, fb, as_f32(scalar_source(w, in, d))))); return;
      case 83: w.write_sgpr64(d, a64 + b64); return;
      case 84: w.write_sgpr64(d, a64 - b64); return;
      case 85: w.write_sgpr64(d, a64 * b64); return;
      case 79: w.write_sgpr(d, bits_of(ieee_minimum(fa, fb))); return;  // s_minimum_f32
      case 80: w.write_sgpr(d, bits_of(ieee_maximum(fa, fb))); return;  // s_maximum_f32
      default: break;
    }
  }
  fail_instruction(c, in, "SOP2 opcode not implemented");
}

void exec_sop1(exec_context& c, wave& w, const instruction& in) {
  const std::uint32_t a = scalar_source(w, in, in.srcs[0]);
  const std::uint64_t a64 = scalar_source64(w, in, in.srcs[0]);
  const unsigned d = in.sdst;
  auto saveexec = [&](std::uint32_t new_exec) {
    const std::uint32_t old = w.exec();
    w.sgpr[src::exec_lo] = new_exec;
    w.write_sgpr(d, old);
    w.scc = new_exec != 0;
  };
  switch (in.op) {
    case 0: w.write_sgpr(d, a); return;
    case 1: w.write_sgpr64(d, a64); return;
    case 2: if (w.scc) w.write_sgpr(d, a); return;
    case 3: if (w.scc) w.write_sgpr64(d, a64); return;
    case 4: w.write_sgpr(d, reverse_bits32((a))); return;
    case 8: w.write_sgpr(d, a == 0 ? ~0u : std::uint32_t(std::countr_zero(a))); return;
    case 9: w.write_sgpr(d, a64 == 0 ? ~0u : std::uint32_t(std::countr_zero(a64))); return;
    case 10: w.write_sgpr(d, a == 0 ? ~0u : std::uint32_t(std::countl_zero(a))); return;
    // s_cls_i32: leading bits equal to the sign bit; -1 for 0 and -1 (as v_cls_i32, exec_valu.cpp).
    case 12: w.write_sgpr(d, a == 0 || a == ~0u ? ~0u : std::uint32_t(std::int32_t(a) < 0 ? std::countl_one(a) : std::countl_zero(a))); return;
    case 14: w.write_sgpr(d, std::uint32_t(std::int32_t(std::int8_t(a)))); return;
    case 15: w.write_sgpr(d, std::uint32_t(std::int32_t(std::int16_t(a)))); return;
    case 16: w.write_sgpr(d, scalar_source(w, in, d) & ~(1u << (a & 31))); return;
    case 18: w.write_sgpr(d, scalar_source(w, in, d) | (1u << (a & 31))); return;
    case 21: { const std::int32_t s = std::int32_t(a); const std::uint32_t r = std::uint32_t(s < 0 ? -std::int64_t(s) : s); w.write_sgpr(d, r); w.scc = r != 0; return; }
    case 22: { const std::uint32_t r = std::uint32_t(std::popcount(~a)); w.write_sgpr(d, r); w.scc = r != 0; return; }
    case 24: { const std::uint32_t r = std::uint32_t(std::popcount(a)); w.write_sgpr(d, r); w.scc = r != 0; return; }
    case 25: { const std::uint32_t r = std::uint32_t(std::popcount(a64)); w.write_sgpr(d, r); w.scc = r != 0; return; }
    case 30: w.write_sgpr(d, ~a); w.scc = ~a != 0; return;
    case 31: w.write_sgpr64(d, ~a64); w.scc = ~a64 != 0; return;
    case 32: saveexec(a & w.exec()); return;
    case 34: saveexec(a | w.exec()); return;
    case 36: saveexec(a ^ w.exec()); return;
    case 44: saveexec(~a & w.exec()); return;   // s_and_not0_saveexec: EXEC = ~S0 & EXEC
    case 48: saveexec(a & ~w.exec()); return;   // s_and_not1_saveexec: EXEC = S0 & ~EXEC
    case 64: w.write_sgpr(d, w.sgpr[(in.srcs[0] + w.sgpr[src::m0]) & 127]); return;
    case 66: w.write_sgpr(d + w.sgpr[src::m0], a); return;
    case 71: w.write_sgpr64(d, w.pc); return;  // the address of the next instruction
    case 72: w.pc = a64; return;
    case 73: { const std::uint64_t next = w.pc; w.pc = a64; w.write_sgpr64(d, next); return; }
    default: break;
  }
  if (c.l.gen == isa_gen::gfx12) {
    const float f = as_f32(a);
    switch (in.op) {
      case 78: barrier_signal(c, w); return;  // s_barrier_signal -1: the workgroup barrier
      case 96: w.write_sgpr(d, bits_of(std::ceil(f))); return;
      case 97: w.write_sgpr(d, bits_of(std::floor(f))); return;
      case 98: w.write_sgpr(d, bits_of(std::trunc(f))); return;
      case 99: w.write_sgpr(d, bits_of(std::nearbyint(f))); return;
      case 100: w.write_sgpr(d, bits_of(float(std::int32_t(a)))); return;
      case 101: w.write_sgpr(d, bits_of(float(a))); return;
      case 102: w.write_sgpr(d, std::uint32_t(f32_to_i32(f))); return;
      case 103: w.write_sgpr(d, f32_to_u32(f)); return;
      case 104: w.write_sgpr(d, f32_to_f16(f)); return;
      case 105: w.write_sgpr(d, bits_of(f16_to_f32(std::uint16_t(a)))); return;
      default: break;
    }
  }
  fail_instruction(c, in, "SOP1 opcode not implemented");
}

void exec_sopc(exec_context& c, wave& w, const instruction& in) {
  const std::uint32_t a = scalar_source(w, in, in.srcs[0]), b = scalar_source(w, in, in.srcs[1]);
  const std::int32_t sa = std::int32_t(a), sb = std::int32_t(b);
  switch (in.op) {
    case 0: w.scc = sa == sb; return;
    case 1: w.scc = sa != sb; return;
    case 2: w.scc = sa > sb; return;
    case 3: w.scc = sa >= sb; return;
    case 4: w.scc = sa < sb; return;
    case 5: w.scc = sa <= sb; return;
    case 6: w.scc = a == b; return;
    case 7: w.scc = a != b; return;
    case 8: w.scc = a > b; return;
    case 9: w.scc = a >= b; return;
    case 10: w.scc = a < b; return;
    case 11: w.scc = a <= b; return;
    case 12: w.scc = ((a >> (b & 31)) & 1) == 0; return;
    case 13: w.scc = ((a >> (b & 31)) & 1) == 1; return;
    case 14: w.scc = ((scalar_source64(w, in, in.srcs[0]) >> (b & 63)) & 1) == 0; return;
    case 15: w.scc = ((scalar_source64(w, in, in.srcs[0]) >> (b & 63)) & 1) == 1; return;
    case 16: w.scc = scalar_source64(w, in, in.srcs[0]) == scalar_source64(w, in, in.srcs[1]); return;
    case 17: w.scc = scalar_source64(w, in, in.srcs[0]) != scalar_source64(w, in, in.srcs[1]); return;
    default: break;
  }
  // gfx12 s_cmp_*_f32 (65-78): the VOPC float conditions 1..14 in the same order.
  if (c.l.gen == isa_gen::gfx12 && in.op >= 65 && in.op <= 78) {
    w.scc = compare_float(in.op - 64, as_f32(scalar_source(w, in, in.srcs[0], operand_type::f32)),
                        as_f32(scalar_source(w, in, in.srcs[1], operand_type::f32)));
    return;
  }
  fail_instruction(c, in, "SOPC opcode not implemented");
}

void exec_sopk(exec_context& c, wave& w, const instruction& in) {
  const std::uint32_t k = std::uint32_t(in.simm16), ku = k & 0xFFFF;
  const unsigned d = in.sdst;
  const std::uint32_t cur = scalar_source(w, in, d);
  const std::int32_t sc = std::int32_t(cur), sk = std::int32_t(k);
  const bool g11 = c.l.gen == isa_gen::gfx11;
  switch (in.op) {
    case 0: w.write_sgpr(d, k); return;
    case 1: return;  // s_version: a hint for tools
    case 2: if (w.scc) w.write_sgpr(d, k); return;
    case 15: {
      const std::int64_t r = std::int64_t(sc) + sk;
      w.write_sgpr(d, std::uint32_t(r));
      w.scc = r != std::int64_t(std::int32_t(std::uint32_t(r)));
      return;
    }
    case 16: w.write_sgpr(d, std::uint32_t(sc * sk)); return;
    default: break;
  }
  if (g11) {
    switch (in.op) {
      case 3: w.scc = sc == sk; return;
      case 4: w.scc = sc != sk; return;
      case 5: w.scc = sc > sk; return;
      case 6: w.scc = sc >= sk; return;
      case 7: w.scc = sc < sk; return;
      case 8: w.scc = sc <= sk; return;
      case 9: w.scc = cur == ku; return;
      case 10: w.scc = cur != ku; return;
      case 11: w.scc = cur > ku; return;
      case 12: w.scc = cur >= ku; return;
      case 13: w.scc = cur < ku; return;
      case 14: w.scc = cur <= ku; return;
      case 25: w.note_load_wait((d == src::null ? 0 : cur) + ku); return;  // s_waitcnt_vmcnt: SGPR + SIMM16
      case 24: case 26: case 27: return;  // s_waitcnt_vscnt/expcnt/lgkmcnt: memory is synchronous
      default: break;
    }
  }
  fail_instruction(c, in, "SOPK opcode not implemented");
}

void branch(wave& w, const instruction& in, bool taken) {
  if (taken) w.pc += std::int64_t(in.simm16) * 4;  // dwords, from the next instruction
}

void exec_sopp(exec_context& c, wave& w, const instruction& in) {
  const bool g11 = c.l.gen == isa_gen::gfx11;
  switch (in.op) {
    // Hints and waits: memory and ALU results are complete when the next instruction runs. The
    // cost model still counts the waits for vector loads (wave.hpp: note_load_wait).
    case 9:  // s_waitcnt (gfx11): VM_CNT in SIMM16[15:10] (AMDGPUBaseInfo.cpp: getVmcntBitShiftLo for GFX11)
      if (g11) w.note_load_wait((std::uint32_t(in.simm16) >> 10) & 0x3F);
      return;
    case 10:  // s_wait_idle
      w.note_load_wait(0);
      return;
    case 0: case 3: case 5: case 7: case 8: case 53: case 60: return;
    // MODE's round and denormal fields (AMDGPUUsage.rst "compute_pgm_rsrc1" gives their encoding):
    // only round-to-nearest-even is computed, and f16/f64 denormals only kept (3, LLVM's default),
    // so anything else ends the dispatch here rather than computing wrong values.
    case 17:
      if (in.simm16 & 0xF) fail_instruction(c, in, "round modes other than nearest-even are not modelled");
      return;
    case 18:
      if (((in.simm16 >> 2) & 3) != 3) fail_instruction(c, in, "flushing f16/f64 denormals is not modelled");
      c.mode.denorm32 = in.simm16 & 3;
      return;
    case 31: fail_instruction(c, in, "executed s_code_end, the padding after the program (fell off its end?)");
    case 32: branch(w, in, true); return;
    case 33: branch(w, in, !w.scc); return;
    case 34: branch(w, in, w.scc); return;
    case 35: branch(w, in, w.vcc() == 0); return;
    case 36: branch(w, in, w.vcc() != 0); return;
    case 37: branch(w, in, w.exec() == 0); return;
    case 38: branch(w, in, w.exec() != 0); return;
    case 48: w.ended = true; return;
    case 54:
      // MSG_DEALLOC_VGPRS (3) before s_endpgm (AMDGPUUsage.rst; SIInsertWaitcnts): only s_endpgm follows.
      if ((in.simm16 & 0xFF) == 3) return;
      fail_instruction(c, in, "s_sendmsg of a message other than MSG_DEALLOC_VGPRS");
    default: break;
  }
  // s_set_inst_prefetch_distance (gfx11): how far the SQ prefetches code, a hint with no effect on results
  // (LLVM puts it around small loops: SIISelLowering.cpp, SITargetLowering::getPrefLoopAlignment).
  if (g11 && in.op == 4) return;
  if (g11 && in.op == 61) {  // s_barrier
    barrier_signal(c, w);
    barrier_wait(c, w, in);
    return;
  }
  if (!g11) {
    if (in.op == 20) { barrier_wait(c, w, in); return; }    // s_barrier_wait -1
    // s_wait_loadcnt (SIMM16 = LOADcnt) and s_wait_loadcnt_dscnt (LOADcnt in SIMM16[13:8]), then
    // the other counters' waits (RDNA4 ISA guide, "Dependency Checking").
    if (in.op == 64) { w.note_load_wait(std::uint32_t(in.simm16) & 0x3F); return; }
    if (in.op == 72) { w.note_load_wait((std::uint32_t(in.simm16) >> 8) & 0x3F); return; }
    if (in.op >= 65 && in.op <= 73) return;
  }
  fail_instruction(c, in, "SOPP opcode not implemented");
}

}  // namespace

void exec_scalar(exec_context& c, wave& w, const instruction& in) {
  switch (in.fam) {
    case family::sop2: exec_sop2(c, w, in); return;
    case family::sop1: exec_sop1(c, w, in); return;
    case family::sopc: exec_sopc(c, w, in); return;
    case family::sopk: exec_sopk(c, w, in); return;
    default: exec_sopp(c, w, in); return;
  }
}

}  // namespace tg::emu::shader
