// decoder.hpp: RDNA3 (gfx11) and RDNA4 (gfx12) instruction words -> a parsed instruction.
//
// Field layouts: AMD "RDNA3 Instruction Set Architecture" and "RDNA4 Instruction Set Architecture"
// reference guides, chapter "Microcode Formats" (cross-checked against llvm-objdump-19 by
// tests/drivers/emu/shader/golden_decode_test.cpp). Every family LLVM 19 emits for compute kernels:
// SOP1/SOP2/SOPK/SOPC/SOPP, SMEM, VOP1/VOP2/VOPC/VOP3 (with the VOP3 SDST form)/VOP3P, VOPD, the
// DPP16/DPP8 extra dword, DS, FLAT/GLOBAL/SCRATCH and MUBUF (gfx11) / VFLAT, VGLOBAL, VSCRATCH (gfx12).
// A 32-bit literal (source operand 255) follows the instruction and counts in its size.
//
// VALU instructions are normalised to the VOP3 form: `op` is in the VOP3 opcode space, `src[0..2]`
// are 9-bit source codes (256 + n for VGPR n), and a VOP1/VOP2/VOPC e32 encoding fills in the
// implicit operands (VCC for VOPC and the carry forms).
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "drivers/emu/shader/opcode_names.hpp"

namespace tg::emu::shader {

// Source operand codes (AMD RDNA3 ISA reference guide, "Scalar ALU Operands" / "Vector ALU Operands").
namespace src {
inline constexpr unsigned vcc_lo = 106, vcc_hi = 107, null = 124, m0 = 125, exec_lo = 126, exec_hi = 127;
inline constexpr unsigned int_first = 128, int_last = 208, dpp8 = 233, dpp8_fi = 234;
inline constexpr unsigned shared_base = 235, shared_limit = 236, private_base = 237, private_limit = 238;
inline constexpr unsigned inv_2pi = 248, dpp16 = 250, scc = 253, literal = 255, vgpr0 = 256;
}  // namespace src

struct dpp_control {
  bool dpp8 = false;
  std::uint16_t ctrl = 0;        // DPP16 dpp_ctrl[8:0]
  std::uint32_t lane_sel = 0;    // DPP8: 8 x 3-bit lane selects
  std::uint8_t row_mask = 0xF, bank_mask = 0xF;
  bool bound_ctrl = false, fi = false;
};

struct instruction {
  family fam = family::sopp;
  std::uint16_t op = 0;           // family opcode; VALU: VOP3 space
  std::uint8_t dwords = 1;        // including a literal and a DPP dword
  std::array<std::uint32_t, 4> raw{};
  // Scalar / common operands.
  std::uint16_t sdst = 0;         // SOP*, SMEM sdata, VOP3SD sdst, VOPC/VOP3 compare destination
  std::uint16_t vdst = 0;         // VGPR number (VALU, DS, memory); for VOP3 writing an SGPR, the SGPR code
  std::array<std::uint16_t, 3> srcs{};  // 9-bit codes
  std::int32_t simm16 = 0;        // SOPK / SOPP, sign-extended
  std::uint32_t literal = 0;
  bool has_literal = false;
  // VALU modifiers.
  std::uint8_t abs = 0, neg = 0, neg_hi = 0, opsel = 0, opsel_hi = 0x7, omod = 0;
  bool clamp = false, has_sdst = false;
  bool has_dpp = false;
  dpp_control dpp;
  // VOPD: the Y half (X is op/vdst/srcs[0..1]).
  std::uint16_t opy = 0, vdsty = 0;
  std::array<std::uint16_t, 2> srcsy{};
  // Memory.
  std::uint16_t addr = 0, data0 = 0, data1 = 0, saddr = 0, sbase = 0, soffset = 0;  // VGPR numbers / SGPR codes
  std::int32_t offset = 0;        // SMEM, FLAT/GLOBAL/SCRATCH immediate offset (sign-extended where signed)
  std::uint8_t offset0 = 0, offset1 = 0;  // DS
  bool sve = false, glc = false, gds = false;
};

struct decode_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The decoded instruction at words[0..]; words must hold at least 4 dwords (pad with 0) so that
// an instruction of any size decodes. Throws decode_error for a word no family matches.
instruction decode(isa_gen gen, std::span<const std::uint32_t> words);

// "v_add_f32" etc.; "<family> opcode N" when the table has no name.
std::string mnemonic(isa_gen gen, const instruction& in);
// "BF8700A1 ..." the raw dwords.
std::string raw_words(const instruction& in);

}  // namespace tg::emu::shader
