// golden_decode_test.cpp: for every instruction of the corpus (corpus/*.ll, compiled with llc-19 -O3 for
// gfx1100, gfx1101, gfx1200 and gfx1201 and linked with ld.lld-19), the interpreter's decoder agrees with
// llvm-objdump-19 on the size, the mnemonic and the operand fields (registers, constants, literals,
// offsets, DPP controls). Exits 77 (skipped) without LLVM's tools.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "drivers/emu/shader/decoder.hpp"
#include "tests/drivers/emu/shader/llvm_tools.hpp"
#include "tests/drivers/emu/shader/objdump_text.hpp"

using namespace tg::emu::shader;
using namespace tg::emu::test;
namespace fs = std::filesystem;

namespace {

fs::path corpus_dir() { return tool("TG_SHADER_CORPUS", "tests/drivers/emu/shader/corpus"); }

struct expected {
  unsigned code;
  bool literal;
};

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// The operands in the order llvm-objdump prints them, from the decoded fields.
std::vector<expected> operands_of(const instruction& in, const std::string& name, std::size_t text_count) {
  std::vector<expected> e;
  auto v = [&](unsigned reg) { e.push_back({256 + reg, false}); };
  auto code = [&](unsigned c) { e.push_back({c, c == src::literal}); };
  switch (in.fam) {
    case family::sop2: code(in.sdst); code(in.srcs[0]); code(in.srcs[1]); break;
    case family::sop1:
      if (text_count == 2) { code(in.sdst); code(in.srcs[0]); }
      else if (name == "s_getpc_b64") code(in.sdst);
      else code(in.srcs[0]);
      break;
    case family::sopc: code(in.srcs[0]); code(in.srcs[1]); break;
    case family::sopk: code(in.sdst); break;  // the immediate is compared on its own
    case family::vop1: case family::vop2: case family::vopc: case family::vop3: {
      const unsigned op = in.op;
      if (op < 256) {
        if (op < 128) code(in.fam == family::vop3 ? in.vdst : in.sdst);
      } else if (name == "v_readlane_b32" || name == "v_readfirstlane_b32" || name.rfind("v_s_", 0) == 0) {
        code(in.vdst);
      } else if (name != "v_nop") {
        v(in.vdst);
      }
      if (in.has_sdst) code(in.sdst);
      if (has(name, "fmamk")) { code(in.srcs[0]); code(src::literal); code(in.srcs[1]); break; }
      if (has(name, "fmaak")) { code(in.srcs[0]); code(in.srcs[1]); code(src::literal); break; }
      for (unsigned i = 0; e.size() < text_count && i < 3; ++i) code(in.srcs[i]);
      break;
    }
    case family::vop3p: v(in.vdst); for (unsigned i = 0; e.size() < text_count && i < 3; ++i) code(in.srcs[i]); break;
    case family::smem: code(in.sdst); code(in.sbase); break;
    case family::ds: {
      const bool returns = has(name, "load") || has(name, "_rtn") || has(name, "permute") || has(name, "swizzle");
      if (returns) v(in.vdst);
      v(in.addr);  // ds_swizzle_b32 reads its data from the ADDR field
      if (e.size() < text_count) v(in.data0);
      if (e.size() < text_count) v(in.data1);
      break;
    }
    case family::flat: case family::global: case family::scratch: {
      if (name == "global_inv" || name == "global_wb") break;
      const bool store = has(name, "store"), atomic = has(name, "atomic");
      if (!store && (!atomic || text_count == (in.fam == family::flat ? 3u : 4u))) v(in.vdst);
      if (in.fam == family::scratch && !in.sve) code(src::null); else v(in.addr);
      if (store || atomic) v(in.data0);
      if (in.fam != family::flat) code(in.saddr);
      break;
    }
    case family::vopd: {
      auto half = [&](unsigned op, unsigned dst, unsigned s0, unsigned s1) {
        v(dst);
        code(s0);
        if (op == 2) { code(src::literal); code(s1); return; }   // fmamk: vdst, src0, K, vsrc1
        if (op != 8) code(s1);                                   // mov has one source
        if (op == 1) code(src::literal);                         // fmaak: vdst, src0, vsrc1, K
      };
      half(in.op, in.vdst, in.srcs[0], in.srcs[1]);
      e.push_back({~0u, false});  // "::"
      half(in.opy, in.vdsty, in.srcsy[0], in.srcsy[1]);
      break;
    }
    default: break;
  }
  return e;
}

// Named modifiers objdump prints that the decoder holds.
void check_modifiers(const instruction& in, const text_instruction& t, std::vector<std::string>& errors) {
  auto num = [&](const char* k) -> std::optional<long long> {
    auto it = t.modifiers.find(k);
    return it == t.modifiers.end() ? std::nullopt : parse_number(it->second);
  };
  auto expect = [&](bool ok, const std::string& what) { if (!ok) errors.push_back(what); };
  const bool mem = in.fam == family::ds || in.fam == family::flat || in.fam == family::global ||
                   in.fam == family::scratch || in.fam == family::smem;
  if (auto o = num("offset"); o && mem) {
    const long long mine = in.fam == family::ds ? (in.offset1 << 8 | in.offset0) : in.offset;
    expect(*o == mine, "offset");
  }
  if (auto o = num("offset0")) expect(*o == in.offset0, "offset0");
  if (auto o = num("offset1")) expect(*o == in.offset1, "offset1");
  if (in.has_dpp && !in.dpp.dpp8) {
    static const std::pair<const char*, unsigned> ctrls[] = {{"row_shl", 0x100}, {"row_shr", 0x110}, {"row_ror", 0x120},
                                                             {"row_share", 0x150}, {"row_xmask", 0x160}};
    for (auto [k, base] : ctrls)
      if (auto o = num(k)) expect(in.dpp.ctrl == base + *o, k);
    if (t.modifiers.count("row_mirror")) expect(in.dpp.ctrl == 0x140, "row_mirror");
    if (t.modifiers.count("row_half_mirror")) expect(in.dpp.ctrl == 0x141, "row_half_mirror");
    if (auto o = num("row_mask")) expect(in.dpp.row_mask == *o, "row_mask");
    if (auto o = num("bank_mask")) expect(in.dpp.bank_mask == *o, "bank_mask");
    expect(in.dpp.bound_ctrl == (t.modifiers.count("bound_ctrl") != 0), "bound_ctrl");
  }
  if (auto it = t.modifiers.find("neg_lo"); it != t.modifiers.end() && in.fam == family::vop3p) {
    unsigned bits = 0, i = 0;
    for (char ch : it->second)
      if (ch == '0' || ch == '1') bits |= unsigned(ch == '1') << i++;
    expect(bits == in.neg, "neg_lo");
  }
  if (in.fam == family::vop3 || in.fam == family::vop3p) expect(in.clamp == (t.modifiers.count("clamp") != 0), "clamp");
}

std::vector<std::string> compare(isa_gen gen, const text_instruction& t) {
  std::vector<std::string> errors;
  std::array<std::uint32_t, 4> w{};
  for (std::size_t i = 0; i < t.words.size() && i < 4; ++i) w[i] = t.words[i];
  instruction in;
  try {
    in = decode(gen, w);
  } catch (const std::exception& e) {
    return {std::string("decode threw: ") + e.what()};
  }
  if (in.dwords != t.words.size()) errors.push_back("size " + std::to_string(in.dwords) + " dwords");
  const std::string mine = mnemonic(gen, in);
  if (mine != t.mnemonic) errors.push_back("mnemonic " + mine);
  if (in.fam == family::sopp) {  // immediates in their own syntax; numbers where objdump prints them
    if (t.operands.size() == 1)
      if (auto n = parse_number(t.operands[0])) {
        if (*n != in.simm16 && *n != (in.simm16 & 0xFFFF)) errors.push_back("simm16");
      }
    return errors;
  }
  if (in.fam == family::sopk && t.operands.size() == 2)
    if (auto n = parse_number(t.operands[1]))
      if (*n != in.simm16 && *n != (in.simm16 & 0xFFFF)) errors.push_back("simm16");
  std::vector<expected> e = operands_of(in, t.mnemonic, t.operands.size());
  std::size_t text_count = t.operands.size();
  if (in.fam == family::sopk) text_count = std::min<std::size_t>(text_count, 1);
  if (in.fam == family::smem) {
    text_count = 2;
    const auto third = t.operands.size() > 2 ? parse_operand(t.operands[2]) : operand_code{};
    if (third.ok && third.code == 255) { if (std::int64_t(third.literal) != in.offset || in.soffset != src::null) errors.push_back("smem offset"); }
    else if (third.ok && third.code < 128) { if (third.code != in.soffset) errors.push_back("smem soffset"); }
    else if (third.ok && third.code >= 128 && third.code <= 192) { if (in.offset != int(third.code - 128)) errors.push_back("smem offset"); }
  }
  if (e.size() != text_count) errors.push_back("operand count " + std::to_string(e.size()));
  for (std::size_t i = 0; i < std::min(e.size(), text_count); ++i) {
    if (e[i].code == ~0u) continue;
    const operand_code p = parse_operand(t.operands[i]);
    if (!p.ok) { errors.push_back("unparsed operand " + t.operands[i]); continue; }
    // objdump prints a literal that is a small negative number in decimal (s_addc_u32 s1, s1, -1 with 0xFFFFFFFF).
    const bool negative_literal = e[i].code == src::literal && p.code >= 193 && p.code <= 208 &&
                                  in.literal == std::uint32_t(192 - std::int32_t(p.code));
    if (negative_literal) continue;
    if (p.code != e[i].code) errors.push_back("operand " + std::to_string(i) + " code " + std::to_string(e[i].code));
    else if (p.code == src::literal && p.literal != in.literal) errors.push_back("literal");
  }
  check_modifiers(in, t, errors);
  return errors;
}

}  // namespace

TEST_CASE("the decoder agrees with llvm-objdump-19 on every instruction of the corpus") {
  const std::pair<const char*, isa_gen> targets[] = {
      {"gfx1100", isa_gen::gfx11}, {"gfx1101", isa_gen::gfx11}, {"gfx1200", isa_gen::gfx12}, {"gfx1201", isa_gen::gfx12}};
  std::size_t instructions = 0, files = 0;
  std::set<std::string> mnemonics;
  temp_dir dir;
  for (const auto& entry : fs::directory_iterator(corpus_dir())) {
    if (entry.path().extension() != ".ll") continue;
    ++files;
    for (auto [mcpu, gen] : targets) {
      const fs::path so = build_code_object(dir, entry.path(), mcpu);
      const auto text = parse_objdump(capture(objdump() + " -d --mcpu=" + mcpu + " " + quoted(so)));
      REQUIRE(!text.empty());
      for (const text_instruction& t : text) {
        ++instructions;
        mnemonics.insert(t.mnemonic);
        const auto errors = compare(gen, t);
        if (!errors.empty()) {
          std::string all;
          for (const auto& e : errors) all += e + "; ";
          FAIL_CHECK(mcpu << " " << entry.path().filename().string() << ": " << t.line << "\n    decoder differs: " << all);
        }
      }
    }
  }
  CHECK(files >= 10);
  CHECK(instructions > 1000);
  MESSAGE("corpus: " << files << " files, " << instructions << " instructions, " << mnemonics.size() << " mnemonics");
}

int main(int argc, char** argv) {
  if (!have_llvm_tools()) return 77;
  doctest::Context context(argc, argv);
  return context.run();
}
