// opcode_names.hpp: the mnemonic of each opcode of the gfx11 and gfx12 encodings (opcode_names.cpp is
// generated from llvm-mc-19's encodings by gen_opcode_names.py).
//
// The VALU families share one table in the VOP3 opcode space (AMD RDNA3/RDNA4 ISA reference guide,
// "VOP3": VOPC opcodes at 0-255, VOP2 at 256 + op, VOP1 at 384 + op, VOP3-only from 512); FLAT uses
// the GLOBAL table with its own prefix; VOPD has one table for both halves.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tg::emu::shader {

enum class isa_gen : std::uint8_t { gfx11, gfx12 };

// Encoding families (AMD RDNA3/RDNA4 ISA reference guides, chapter "Microcode Formats").
enum class family : std::uint8_t {
  sop2, sop1, sopc, sopk, sopp, smem, vop1, vop2, vopc, vop3, vop3p, vopd, ds, flat, global, scratch, mubuf
};
std::string_view family_name(family f);

struct op_name {
  std::uint16_t op;
  std::string_view name;
};

// Sorted by op.
std::span<const op_name> opcode_names(isa_gen gen, family f);
// "" when the table has no such opcode. `op` is in the VOP3 space for the VALU families.
std::string mnemonic_of(isa_gen gen, family f, unsigned op);

}  // namespace tg::emu::shader
