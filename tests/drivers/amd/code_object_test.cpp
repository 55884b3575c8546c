// code_object_test.cpp: the AMDGPU code-object loader against LLVM 19's own tools.
//
// Suite "llvm" builds code objects at test time from kernels/*.ll with llc-19 (gfx1100, gfx1200)
// and ld.lld-19 -shared, and checks what the loader reads against goldens from LLVM: the
// .amdhsa_* directives and .args metadata of `llc -filetype=asm` for the same IR, llvm-objdump's
// hex dump and descriptor decoding, and llvm-readelf's symbols, sections and relocations. Run with
// --llvm it exits 77 (skipped) when the tools are missing (TG_LLC, TG_LLD, TG_READELF, TG_OBJDUMP
// name them; meson finds them). Without --llvm it runs the other tests, which need no tools: a
// small hand-built ELF for exact errors and relocation arithmetic, and the kernarg layout.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "drivers/amd/code_object.hpp"
#include "drivers/amd/code_object_kernargs.hpp"
#include "drivers/amd/elf_reader.hpp"
#include "drivers/amd/regs/gc_11_0_0.hpp"
#include "drivers/amd/regs/gc_12_0_0.hpp"

namespace fs = std::filesystem;
using namespace tg::amd;
using tg::usage_error;
using tg::queue::gpu_va;
namespace pm4 = tg::queue::pm4;

namespace {

// ---------------------------------------------------------------- a hand-built gfx1100 ET_DYN ----
// One PT_LOAD (R+X) at vaddr 0: the descriptor "k.kd" at 0 (.rodata), code at 0x100 (.text), and
// a relocation target area at 0x180. .dynsym: 1 k.kd, 2 k, 3 data (0x1C0). .rela.dyn: `relocs`.
struct tiny_elf {
  std::uint16_t machine = 224, type = 3;
  std::uint8_t osabi = 64, abi_version = 3;
  std::uint32_t flags = 0x41;
  std::uint64_t kd_size = 64;
  std::string kd_name = "k.kd";
  std::uint32_t group = 0x400, priv = 0x204, kernarg = 0x1C;
  std::int64_t entry_offset = 0x100;
  std::uint32_t rsrc1 = 0xA1A1A1A1, rsrc2 = 0xA2A2A2A2, rsrc3 = 0xA3A3A3A3;
  std::uint16_t properties = 0x0408, preload = 0;  // kernarg segment pointer, wave32
  std::vector<elf::rela> relocs;
  static constexpr std::uint64_t shoff = 0x500;
  static constexpr std::uint16_t shnum = 7;

  std::vector<std::byte> build() const {
    std::vector<std::byte> f(shoff + shnum * 64);
    auto u8 = [&](std::size_t at, std::uint8_t v) { f[at] = std::byte(v); };
    auto u16 = [&](std::size_t at, std::uint16_t v) { elf::store_le(std::span(f), at, v); };
    auto u32 = [&](std::size_t at, std::uint32_t v) { elf::store_le(std::span(f), at, v); };
    auto u64 = [&](std::size_t at, std::uint64_t v) { elf::store_le(std::span(f), at, v); };
    auto text = [&](std::size_t at, std::string_view s) {
      for (char c : s) f[at++] = std::byte(c);
    };
    text(0, "\x7F" "ELF");
    u8(4, 2), u8(5, 1), u8(6, 1), u8(7, osabi), u8(8, abi_version);
    u16(16, type), u16(18, machine), u32(20, 1), u64(32, 0x40), u64(40, shoff), u32(48, flags);
    u16(52, 64), u16(54, 56), u16(56, 1), u16(58, 64), u16(60, shnum), u16(62, 5);
    u32(0x40, 1), u32(0x44, 5), u64(0x48, 0x100), u64(0x50, 0), u64(0x58, 0), u64(0x60, 0x200),
        u64(0x68, 0x200), u64(0x70, 0x100);  // PT_LOAD R+X, file 0x100.. -> vaddr 0..0x200
    u32(0x100, group), u32(0x104, priv), u32(0x108, kernarg), u64(0x110, std::uint64_t(entry_offset));
    u32(0x12C, rsrc3), u32(0x130, rsrc1), u32(0x134, rsrc2), u16(0x138, properties), u16(0x13A, preload);
    for (std::size_t at = 0x200; at < 0x280; at += 4) u32(at, 0xBFB00000);  // s_endpgm (gfx11)
    std::string dynstr = std::string("\0", 1) + kd_name + std::string("\0k\0data\0", 8);
    auto sym = [&](std::size_t i, std::uint32_t name, std::uint8_t info, std::uint16_t shndx, std::uint64_t value,
                   std::uint64_t size) {
      std::size_t at = 0x300 + i * 24;
      u32(at, name), u8(at + 4, info), u16(at + 6, shndx), u64(at + 8, value), u64(at + 16, size);
    };
    auto name_k = std::uint32_t(1 + kd_name.size() + 1);
    sym(1, 1, 0x11, 1, 0, kd_size), sym(2, name_k, 0x12, 6, 0x100, 0x80), sym(3, name_k + 2, 0x11, 6, 0x1C0, 8);
    text(0x360, dynstr);
    for (std::size_t i = 0; i < relocs.size(); ++i)
      u64(0x3A0 + i * 24, relocs[i].offset), u64(0x3A8 + i * 24, std::uint64_t(relocs[i].symbol) << 32 | relocs[i].type),
          u64(0x3B0 + i * 24, std::uint64_t(relocs[i].addend));
    const char shstr[] = "\0.rodata\0.dynsym\0.dynstr\0.rela.dyn\0.shstrtab\0.text";
    text(0x480, std::string_view(shstr, sizeof shstr));
    auto shdr = [&](std::size_t i, std::uint32_t name, std::uint32_t t, std::uint64_t fl, std::uint64_t addr,
                    std::uint64_t off, std::uint64_t size, std::uint32_t link, std::uint64_t entsize) {
      std::size_t at = shoff + i * 64;
      u32(at, name), u32(at + 4, t), u64(at + 8, fl), u64(at + 16, addr), u64(at + 24, off), u64(at + 32, size),
          u32(at + 40, link), u64(at + 48, 8), u64(at + 56, entsize);
    };
    shdr(1, 1, elf::sht_progbits, elf::shf_alloc, 0, 0x100, 64, 0, 0);
    shdr(2, 9, elf::sht_dynsym, elf::shf_alloc, 0, 0x300, 4 * 24, 3, 24);
    shdr(3, 17, elf::sht_strtab, elf::shf_alloc, 0, 0x360, dynstr.size(), 0, 0);
    shdr(4, 25, elf::sht_rela, elf::shf_alloc, 0, 0x3A0, relocs.size() * 24, 2, 24);
    shdr(5, 35, elf::sht_strtab, 0, 0, 0x480, sizeof shstr, 0, 0);
    shdr(6, 45, elf::sht_progbits, elf::shf_alloc | elf::shf_execinstr, 0x100, 0x200, 0x100, 0, 0);
    return f;
  }
  code_object load() const { return code_object(build()); }
};

std::uint64_t u64_at(const std::vector<std::byte>& v, std::uint64_t at) { return elf::load_le<std::uint64_t>(v, at); }
std::uint32_t u32_at(const std::vector<std::byte>& v, std::uint64_t at) { return elf::load_le<std::uint32_t>(v, at); }

// ------------------------------------------------------------------------------ LLVM tools ----
struct tools {
  std::string llc, lld, readelf, objdump;
  fs::path kernels, work;
};
tools tool;

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

// Single-quoted for the shell (our paths hold no quotes).
std::string quote(const fs::path& p) {
  std::string q(1, '\'');
  q += p.string();
  q += '\'';
  return q;
}

// Runs `cmd` through the shell; stdout, and whether it exited 0.
std::pair<bool, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {false, ""};
  std::array<char, 4096> buf;
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  return {pclose(pipe) == 0, out};
}

std::string must_run(const std::string& cmd) {
  std::pair<bool, std::string> r = run(cmd);  // no structured binding: INFO captures it
  INFO(cmd, "\n", r.second);
  REQUIRE(r.first);
  return r.second;
}

std::vector<std::byte> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

struct built {
  fs::path obj, so;
  std::string asm_text;
};

// kernels/<name>.ll compiled for `mcpu` to an object, a shared object and assembly (cached).
const built& build(const std::string& name, const std::string& mcpu) {
  static std::map<std::string, built> cache;
  std::string key = name + "_" + mcpu;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  fs::path ll = tool.kernels / (name + ".ll");
  built b{tool.work / (key + ".o"), tool.work / (key + ".so"), ""};
  std::string llc = tool.llc + " -mtriple=amdgcn-amd-amdhsa -mcpu=" + mcpu + " " + quote(ll);
  must_run(llc + " -filetype=obj -o " + quote(b.obj));
  must_run(tool.lld + " -shared " + quote(b.obj) + " -o " + quote(b.so));
  b.asm_text = must_run(llc + " -filetype=asm -o -");
  return cache.emplace(key, std::move(b)).first->second;
}

// ------------------------------------------------------------------- golden text parsers ----
// `.amdhsa_<field> <value>` inside `.amdhsa_kernel <kernel>` .. `.end_amdhsa_kernel`: llc's
// assembly and llvm-objdump's descriptor decoding print the same form.
std::map<std::string, long long> amdhsa_directives(const std::string& text, const std::string& kernel) {
  std::map<std::string, long long> out;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  static const std::regex directive(R"(^\s*\.amdhsa_(\w+)\s+(-?\d+)\s*$)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, std::regex(R"(^\s*\.amdhsa_kernel\s+(\S+)\s*$)"))) inside = m[1] == kernel;
    else if (line.find(".end_amdhsa_kernel") != std::string::npos) inside = false;
    else if (inside && std::regex_match(line, m, directive)) out[m[1]] = std::stoll(m[2]);
  }
  return out;
}

// The explicit-argument .offset values of `kernel` in llc's amdhsa.kernels metadata (hidden_* skipped).
std::vector<std::uint32_t> metadata_arg_offsets(const std::string& text, const std::string& kernel) {
  std::vector<std::uint32_t> offsets;
  std::istringstream in(text.substr(text.find("amdhsa.kernels:")));
  std::string line, name;
  std::vector<std::pair<std::uint32_t, std::string>> args;  // offset, value_kind
  auto flush = [&] {
    if (name == kernel)
      for (auto& [off, kind] : args)
        if (kind.rfind("hidden_", 0) != 0) offsets.push_back(off);
    args.clear(), name.clear();
  };
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("  - ", 0) == 0) flush();
    if (line.rfind("      - ", 0) == 0) args.emplace_back(0, "");
    if (std::regex_search(line, m, std::regex(R"(^ {6,8}(?:- )?\.offset:\s+(\d+))"))) args.back().first = std::stoul(m[1]);
    if (std::regex_search(line, m, std::regex(R"(^ {6,8}(?:- )?\.value_kind:\s+(\S+))"))) args.back().second = m[1];
    if (std::regex_search(line, m, std::regex(R"(^    \.name:\s+(\S+))"))) name = m[1];
  }
  flush();
  return offsets;
}

// Symbol name -> value, from llvm-readelf --symbols (the .symtab entries win).
std::map<std::string, std::uint64_t> readelf_symbols(const fs::path& p) {
  std::map<std::string, std::uint64_t> out;
  std::istringstream in(must_run(tool.readelf + " --symbols --wide " + quote(p)));
  std::string line;
  static const std::regex sym(R"(^\s*\d+:\s+([0-9a-f]+)\s+\d+\s+\w+\s+\w+\s+\w+\s+\S+\s+(\S+)\s*$)");
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_match(line, m, sym)) out[m[2]] = std::stoull(m[1], nullptr, 16);
  return out;
}

std::uint64_t readelf_header_number(const fs::path& p, const std::string& label) {
  std::string h = must_run(tool.readelf + " --file-header " + quote(p));
  std::smatch m;
  REQUIRE(std::regex_search(h, m, std::regex(label + R"(:\s+(\d+))")));
  return std::stoull(m[1]);
}

// The bytes llvm-objdump --full-contents prints for `section`, keyed by address.
std::map<std::uint64_t, std::uint8_t> objdump_contents(const fs::path& p, const std::string& section) {
  std::map<std::uint64_t, std::uint8_t> out;
  std::istringstream in(must_run(tool.objdump + " --full-contents --section=" + section + " " + quote(p)));
  std::string line;
  static const std::regex row(R"(^ ([0-9a-f]+) ((?:[0-9a-f]{2,8} ?){1,4}) )");
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, row)) continue;
    std::uint64_t at = std::stoull(m[1], nullptr, 16);
    std::string hex = std::regex_replace(std::string(m[2]), std::regex(" "), "");
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out[at++] = std::uint8_t(std::stoul(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

std::uint32_t dumped_u32(const std::map<std::uint64_t, std::uint8_t>& bytes, std::uint64_t at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t(bytes.at(at + i)) << (8 * i);
  return v;
}

const std::string targets[] = {"gfx1100", "gfx1200"};
struct ir_kernel {
  std::string file, name;  // kernels/<file>.ll defines kernel <name>
};
const ir_kernel our_kernels[] = {
    {"add", "add"}, {"add", "add_defaults"}, {"lds", "reverse_tile"}, {"scratch", "private_array"},
    {"globals", "lookup"}};

}  // namespace

// ======================================================= hand-built ELF: no tools needed ====

TEST_CASE("a hand-built gfx1100 object yields its descriptor, entry and dispatch summary") {
  tiny_elf t;
  code_object co = t.load();
  CHECK(co.target() == gfx_target::gfx1100);
  CHECK(co.gfx() == pm4::gfx_version::gfx11);
  CHECK(co.image_bytes() == 0x200);
  CHECK(co.load_alignment() == 0x100);
  REQUIRE(co.kernels().size() == 1);
  const code_object_kernel& k = co.kernel("k");
  CHECK(k.descriptor_offset == 0);
  CHECK(k.entry_offset == 0x100);
  CHECK(k.descriptor.group_segment_fixed_size == 0x400);
  CHECK(k.descriptor.private_segment_fixed_size == 0x204);
  CHECK(k.descriptor.kernarg_size == 0x1C);
  CHECK(k.descriptor.compute_pgm_rsrc1 == 0xA1A1A1A1);
  CHECK(k.descriptor.compute_pgm_rsrc2 == 0xA2A2A2A2);
  CHECK(k.descriptor.compute_pgm_rsrc3 == 0xA3A3A3A3);
  CHECK(k.descriptor.wave32());
  pm4::kernel_summary s = co.summary("k", gpu_va{0x1234'5600});
  CHECK(s.entry == gpu_va{0x1234'5700});
  CHECK(s.group_segment_bytes == 0x400);
  CHECK(s.kernarg_bytes == 0x1C);
  CHECK((s.rsrc1 == 0xA1A1A1A1 && s.rsrc2 == 0xA2A2A2A2 && s.rsrc3 == 0xA3A3A3A3));
  CHECK(s.code_properties == 0x0408);
  std::vector<std::byte> image = co.image_at(gpu_va{0x1234'5600});
  CHECK(u32_at(image, 0x100) == 0xBFB00000u);
}

TEST_CASE("headers that are not a gfx1100/gfx1200 AMDGPU ELF64 are refused by name") {
  tiny_elf t;
  std::vector<std::byte> f = t.build();
  SUBCASE("too small") {
    f.resize(40);
    CHECK_THROWS_WITH_AS(code_object{f}, "code object: 40 bytes is too small for an ELF64 header (64 bytes); "
                         "the file is truncated or not an ELF file", usage_error);
  }
  SUBCASE("no magic") {
    f[1] = std::byte('X');
    CHECK_THROWS_WITH_AS(code_object{f}, "code object: not an ELF file (no 7f 45 4c 46 magic at offset 0)", usage_error);
  }
  SUBCASE("32-bit") {
    f[4] = std::byte{1};
    CHECK_THROWS_WITH_AS(code_object{f}, "code object: ELF class 1 is not ELFCLASS64 (2); AMDGPU code objects are "
                         "64-bit ELF", usage_error);
  }
  SUBCASE("big-endian") {
    f[5] = std::byte{2};
    CHECK_THROWS_WITH_AS(code_object{f}, "code object: ELF data encoding 2 is not ELFDATA2LSB (1); AMDGPU code "
                         "objects are little-endian", usage_error);
  }
  SUBCASE("truncated section header table") {
    f.resize(0x520);
    CHECK_THROWS_WITH_AS(code_object{f}, "code object: section header table (offset 1280, 7 entries of 64 bytes) "
                         "runs past the end of the file (1312 bytes); the file is truncated", usage_error);
  }
  SUBCASE("x86-64") {
    t.machine = 62;
    CHECK_THROWS_WITH_AS(t.load(), "code object: e_machine 62 is not EM_AMDGPU (224); compile with llc "
                         "-mtriple=amdgcn-amd-amdhsa", usage_error);
  }
  SUBCASE("not the HSA OS ABI") {
    t.osabi = 0;
    CHECK_THROWS_WITH_AS(t.load(), "code object: EI_OSABI 0 is not ELFOSABI_AMDGPU_HSA (64); compile with llc "
                         "-mtriple=amdgcn-amd-amdhsa", usage_error);
  }
  SUBCASE("code object v2") {
    t.abi_version = 0;
    CHECK_THROWS_WITH_AS(t.load(), "code object: EI_ABIVERSION 0 (code object v2) is not supported; tg reads the "
                         "kernel descriptors of code object v3 to v6", usage_error);
  }
  SUBCASE("an executable") {
    t.type = 2;
    CHECK_THROWS_WITH_AS(t.load(), "code object: e_type 2 is neither ET_REL (1) nor ET_DYN (3)", usage_error);
  }
  SUBCASE("gfx90a") {
    t.flags = 0x3F;
    CHECK_THROWS_WITH_AS(t.load(), "code object: e_flags mach 0x3f (gfx90a) is not supported; tg loads gfx1100 and "
                         "gfx1200 code objects (llc -mcpu=gfx1100 or -mcpu=gfx1200)", usage_error);
  }
  SUBCASE("a mach LLVM 19 does not name") {
    t.flags = 0xEE;
    CHECK_THROWS_WITH_AS(t.load(), "code object: e_flags mach 0xee is not supported; tg loads gfx1100 and gfx1200 "
                         "code objects (llc -mcpu=gfx1100 or -mcpu=gfx1200)", usage_error);
  }
  SUBCASE("gfx1200 is accepted") {
    t.flags = 0x48;
    CHECK(t.load().gfx() == pm4::gfx_version::gfx12);
  }
}

TEST_CASE("descriptors that cannot be located or entered are refused, naming the kernel and field") {
  tiny_elf t;
  SUBCASE("no .kd symbol") {
    t.kd_name = "k.kx";
    CHECK_THROWS_WITH_AS(t.load(), "code object: no kernel descriptor symbols (<kernel>.kd) in .dynsym; was it "
                         "compiled from an amdgpu_kernel function?", usage_error);
  }
  SUBCASE("a descriptor symbol of the wrong size") {
    t.kd_size = 32;
    CHECK_THROWS_WITH_AS(t.load(), "code object: kernel 'k': symbol k.kd is 32 bytes; a kernel descriptor is 64",
                         usage_error);
  }
  SUBCASE("an entry outside the code") {
    t.entry_offset = 0x1000;
    CHECK_THROWS_WITH_AS(t.load(), "code object: kernel 'k': kernel_code_entry_byte_offset 4096 puts the entry "
                         "outside the executable code (descriptor at image offset 0x0)", usage_error);
  }
  SUBCASE("an entry that is not 256-byte aligned") {
    t.entry_offset = 0x104;
    CHECK_THROWS_WITH_AS(t.load(), "code object: kernel 'k': kernel_code_entry_byte_offset puts the entry at image "
                         "offset 0x104, which is not 256-byte aligned (COMPUTE_PGM_LO holds the address >> 8)",
                         usage_error);
  }
  SUBCASE("an unknown kernel name lists the kernels") {
    CHECK_THROWS_WITH_AS(t.load().kernel("add"), "code object: no kernel 'add'; it has k", usage_error);
  }
  SUBCASE("a load address below the object's alignment") {
    CHECK_THROWS_WITH_AS(t.load().summary("k", gpu_va{0x1080}), "code object: load address 0x1080 is not a multiple "
                         "of the code object's alignment 0x100", usage_error);
  }
}

TEST_CASE("kernels asking for what tg does not provide are refused at summary time") {
  tiny_elf t;
  auto refused = [&](std::uint16_t extra) {
    t.properties = std::uint16_t(0x0408 | extra);
    return t.load().summary("k", gpu_va{0});
  };
  const std::string head = "code object: kernel 'k': kernel_code_properties.";
  const std::string only = " is set; tg provides only the private segment buffer, dispatch pointer and kernarg "
                           "pointer user SGPRs";
  CHECK_THROWS_WITH_AS(refused(pm4::kcp_queue_ptr), (head + "ENABLE_SGPR_QUEUE_PTR" + only +
                       "; compile for code object v5 with \"amdgpu-no-queue-ptr\"").c_str(), usage_error);
  CHECK_THROWS_WITH_AS(refused(pm4::kcp_dispatch_id), (head + "ENABLE_SGPR_DISPATCH_ID" + only +
                       "; compile with \"amdgpu-no-dispatch-id\"").c_str(), usage_error);
  CHECK_THROWS_WITH_AS(refused(pm4::kcp_flat_scratch_init), (head + "ENABLE_SGPR_FLAT_SCRATCH_INIT" + only).c_str(),
                       usage_error);
  CHECK_THROWS_WITH_AS(refused(pm4::kcp_private_segment_size),
                       (head + "ENABLE_SGPR_PRIVATE_SEGMENT_SIZE" + only).c_str(), usage_error);
  CHECK_THROWS_WITH_AS(refused(kcp_uses_dynamic_stack), (head + "USES_DYNAMIC_STACK is set (recursion, indirect "
                       "calls or dynamic allocas); tg sizes scratch from private_segment_fixed_size (516 bytes) only")
                       .c_str(), usage_error);
  CHECK_NOTHROW(refused(pm4::kcp_dispatch_ptr | pm4::kcp_private_segment_buffer));
  t.properties = 0x0408;
  t.preload = 0x0081;
  CHECK_THROWS_WITH_AS(t.load().summary("k", gpu_va{0}), "code object: kernel 'k': kernarg_preload is 0x81; tg "
                       "passes kernel arguments in memory only", usage_error);
}

TEST_CASE("relocations are computed per AMDGPUUsage for the load address") {
  // S(data) = 0x1C0, P = 0x180 + 8i, B = 0x7F00'0000'0000.
  tiny_elf t;
  t.relocs = {{0x180, r_amdgpu::abs64, 3, 0x10},      {0x188, r_amdgpu::relative64, 0, 0x40},
              {0x190, r_amdgpu::rel64, 3, -4},        {0x198, r_amdgpu::rel32_lo, 3, 0x24},
              {0x19C, r_amdgpu::rel32_hi, 3, 0x24},   {0x1A0, r_amdgpu::abs32_lo, 3, 0},
              {0x1A4, r_amdgpu::abs32_hi, 3, 0},      {0x1A8, r_amdgpu::rel32, 3, 0}};
  constexpr std::uint64_t base = 0x7F00'0000'0000;
  std::vector<std::byte> image = t.load().image_at(gpu_va{base});
  CHECK(u64_at(image, 0x180) == base + 0x1C0 + 0x10);
  CHECK(u64_at(image, 0x188) == base + 0x40);
  CHECK(u64_at(image, 0x190) == 0x1C0 - 4 - 0x190);
  CHECK(u32_at(image, 0x198) == 0x1C0 + 0x24 - 0x198);
  CHECK(u32_at(image, 0x19C) == 0);
  CHECK(u32_at(image, 0x1A0) == std::uint32_t(base + 0x1C0));
  CHECK(u32_at(image, 0x1A4) == std::uint32_t((base + 0x1C0) >> 32));
  CHECK(u32_at(image, 0x1A8) == 0x1C0 - 0x1A8);
  SUBCASE("ABS32 must fit") {
    t.relocs = {{0x180, r_amdgpu::abs32, 3, 0}};
    CHECK(u32_at(t.load().image_at(gpu_va{0x1000}), 0x180) == 0x11C0);
    CHECK_THROWS_WITH_AS(t.load().image_at(gpu_va{base}), "code object: R_AMDGPU_ABS32 at image offset 0x180: value "
                         "0x7f00000001c0 does not fit 32 bits (load address 0x7f0000000000)", usage_error);
  }
  SUBCASE("types tg does not apply") {
    t.relocs = {{0x180, r_amdgpu::gotpcrel32_lo, 3, 0}};
    CHECK_THROWS_WITH_AS(t.load(), "code object: relocation 0 of section '.rela.dyn': relocation "
                         "R_AMDGPU_GOTPCREL32_LO is not supported (it needs a GOT; link the object with ld.lld "
                         "-shared, which builds one)", usage_error);
    t.relocs = {{0x180, 99, 3, 0}};
    CHECK_THROWS_WITH_AS(t.load(), "code object: relocation 0 of section '.rela.dyn': unknown AMDGPU relocation "
                         "type 99 (not in LLVM 19 ELFRelocs/AMDGPU.def)", usage_error);
  }
  SUBCASE("outside the image") {
    t.relocs = {{0x1FC, r_amdgpu::abs64, 3, 0}};
    CHECK_THROWS_WITH_AS(t.load(), "code object: relocation 0 of section '.rela.dyn' patches offset 0x1fc, outside "
                         "what it relocates (0x200 bytes)", usage_error);
  }
}

TEST_CASE("the descriptor's RSRC fields sit where the Linux gc_11_0_0 and gc_12_0_0 headers put them") {
  for (const tg::queue::reg_table* regs : {&regs::gc_11_0_0::table, &regs::gc_12_0_0::table}) {
    CAPTURE(regs->ip);
    auto same = [&](const char* reg, const char* field, kd_field f) {
      const tg::queue::reg_field& r = regs->field(regs->reg(reg), field);
      CHECK(r.shift == f.shift);
      CHECK(r.mask == ((1u << f.width) - 1) << f.shift);
    };
    same("regCOMPUTE_PGM_RSRC1", "VGPRS", rsrc1::granulated_workitem_vgpr_count);
    same("regCOMPUTE_PGM_RSRC1", "SGPRS", rsrc1::granulated_wavefront_sgpr_count);
    same("regCOMPUTE_PGM_RSRC2", "SCRATCH_EN", rsrc2::enable_private_segment);
    same("regCOMPUTE_PGM_RSRC2", "USER_SGPR", rsrc2::user_sgpr_count);
    same("regCOMPUTE_PGM_RSRC2", "TGID_X_EN", rsrc2::enable_sgpr_workgroup_id_x);
    same("regCOMPUTE_PGM_RSRC2", "TGID_Y_EN", rsrc2::enable_sgpr_workgroup_id_y);
    same("regCOMPUTE_PGM_RSRC2", "TGID_Z_EN", rsrc2::enable_sgpr_workgroup_id_z);
    same("regCOMPUTE_PGM_RSRC2", "TG_SIZE_EN", rsrc2::enable_sgpr_workgroup_info);
    same("regCOMPUTE_PGM_RSRC2", "TIDIG_COMP_CNT", rsrc2::enable_vgpr_workitem_id);
    same("regCOMPUTE_PGM_RSRC2", "LDS_SIZE", rsrc2::granulated_lds_size);
  }
}

TEST_CASE("kernel arguments are laid out at their natural alignment, in order") {
  const kernarg args[] = {kernarg_u32, kernarg_pointer, kernarg_u64, kernarg_u32, {2, 2}, {16, 16}};
  kernarg_layout l = layout_kernargs(args);
  CHECK(l.offsets == std::vector<std::uint32_t>{0, 8, 16, 24, 28, 32});
  CHECK(l.explicit_bytes == 48);
  CHECK(l.alloc_bytes == 48);
  CHECK(layout_kernargs(std::span<const kernarg>{}).explicit_bytes == 0);
  const kernarg bad_align[] = {kernarg_u32, {4, 3}};
  CHECK_THROWS_WITH_AS(layout_kernargs(bad_align), "kernargs: argument 1 has alignment 3; alignments are powers of "
                       "two up to 16", usage_error);
  const kernarg empty[] = {{0, 4}};
  CHECK_THROWS_WITH_AS(layout_kernargs(empty), "kernargs: argument 0 has size 0", usage_error);

  SUBCASE("against a descriptor") {
    tiny_elf t;  // kernarg_size 0x1C
    t.properties = 0x0408 | pm4::kcp_dispatch_ptr;
    code_object co = t.load();
    const kernarg two[] = {kernarg_pointer, kernarg_u32};
    kernarg_layout k = layout_kernargs(co.kernel("k"), two);
    CHECK(k.offsets == std::vector<std::uint32_t>{0, 8});
    CHECK(k.explicit_bytes == 12);
    CHECK(k.kernarg_bytes == 0x1C);
    CHECK(k.hidden_bytes == 0x1C - 12);
    CHECK(k.dispatch_packet_offset == 0x1Cu);
    CHECK(k.alloc_bytes == 0x1C + 64);
    const kernarg five[] = {kernarg_pointer, kernarg_pointer, kernarg_pointer, kernarg_pointer};
    CHECK_THROWS_WITH_AS(layout_kernargs(co.kernel("k"), five), "kernargs: kernel 'k': 4 arguments take 32 bytes, but "
                         "its descriptor's kernarg_size is 28; the argument list does not match the kernel's "
                         "signature", usage_error);
  }
}

// ================================================ code objects built by LLVM 19 at test time ====

TEST_SUITE("llvm") {

TEST_CASE("each descriptor matches the .amdhsa directives llc prints for the same kernel") {
  for (const std::string& mcpu : targets) {
    for (const ir_kernel& kernel : our_kernels) {
      const std::string &file = kernel.file, &name = kernel.name;
      CAPTURE(mcpu);
      CAPTURE(name);
      const built& b = build(file, mcpu);
      code_object co(read_bytes(b.so));
      const kernel_descriptor& kd = co.kernel(name).descriptor;
      std::map<std::string, long long> d = amdhsa_directives(b.asm_text, name);
      REQUIRE(d.size() > 20);
      CHECK(kd.group_segment_fixed_size == d.at("group_segment_fixed_size"));
      CHECK(kd.private_segment_fixed_size == d.at("private_segment_fixed_size"));
      CHECK(kd.kernarg_size == d.at("kernarg_size"));
      CHECK(kd.user_sgpr_count() == d.at("user_sgpr_count"));
      CHECK(kd.has(pm4::kcp_dispatch_ptr) == bool(d.at("user_sgpr_dispatch_ptr")));
      CHECK(kd.has(pm4::kcp_queue_ptr) == bool(d.at("user_sgpr_queue_ptr")));
      CHECK(kd.has(pm4::kcp_kernarg_segment_ptr) == bool(d.at("user_sgpr_kernarg_segment_ptr")));
      CHECK(kd.has(pm4::kcp_dispatch_id) == bool(d.at("user_sgpr_dispatch_id")));
      CHECK(kd.has(pm4::kcp_private_segment_size) == bool(d.at("user_sgpr_private_segment_size")));
      CHECK(kd.wave32() == bool(d.at("wavefront_size32")));
      CHECK(kd.uses_dynamic_stack() == bool(d.at("uses_dynamic_stack")));
      CHECK(kd.enables_private_segment() == bool(d.at("enable_private_segment")));
      std::uint32_t r2 = kd.compute_pgm_rsrc2;
      CHECK(rsrc2::enable_sgpr_workgroup_id_x.get(r2) == d.at("system_sgpr_workgroup_id_x"));
      CHECK(rsrc2::enable_sgpr_workgroup_id_y.get(r2) == d.at("system_sgpr_workgroup_id_y"));
      CHECK(rsrc2::enable_sgpr_workgroup_id_z.get(r2) == d.at("system_sgpr_workgroup_id_z"));
      CHECK(rsrc2::enable_sgpr_workgroup_info.get(r2) == d.at("system_sgpr_workgroup_info"));
      CHECK(rsrc2::enable_vgpr_workitem_id.get(r2) == d.at("system_vgpr_workitem_id"));
      // The descriptor holds VGPRs in granules: llc's exact count rounds up to within one granule.
      CHECK(kd.vgpr_count() >= d.at("next_free_vgpr"));
      CHECK(kd.vgpr_count() < std::max(d.at("next_free_vgpr"), 1LL) + 8);
    }
  }
}

TEST_CASE("each descriptor matches llvm-objdump's dump and decoding of the same bytes") {
  for (const std::string& mcpu : targets) {
    for (const ir_kernel& kernel : our_kernels) {
      const std::string &file = kernel.file, &name = kernel.name;
      CAPTURE(mcpu);
      CAPTURE(name);
      const built& b = build(file, mcpu);
      code_object co(read_bytes(b.so));
      const code_object_kernel& k = co.kernel(name);
      std::map<std::uint64_t, std::uint8_t> rodata = objdump_contents(b.so, ".rodata");
      std::uint64_t at = k.descriptor_offset;  // vaddr = image offset for ld.lld's shared objects
      CHECK(k.descriptor.compute_pgm_rsrc1 == dumped_u32(rodata, at + 48));
      CHECK(k.descriptor.compute_pgm_rsrc2 == dumped_u32(rodata, at + 52));
      CHECK(k.descriptor.compute_pgm_rsrc3 == dumped_u32(rodata, at + 44));
      CHECK(k.descriptor.kernel_code_properties == (dumped_u32(rodata, at + 56) & 0xFFFF));
      // llvm-objdump 19 refuses to decode descriptors whose RSRC1 SGPR granules are non-zero (it
      // wants them zero on gfx10+, which llc does not always write); compare when it decodes.
      std::string dis = must_run(tool.objdump + " --disassemble --section=.rodata " + quote(b.so));
      std::map<std::string, long long> d = amdhsa_directives(dis, name);
      if (d.empty()) {
        MESSAGE("llvm-objdump did not decode ", name, ".kd for ", mcpu);
        continue;
      }
      CHECK(k.descriptor.group_segment_fixed_size == d.at("group_segment_fixed_size"));
      CHECK(k.descriptor.private_segment_fixed_size == d.at("private_segment_fixed_size"));
      CHECK(k.descriptor.kernarg_size == d.at("kernarg_size"));
      CHECK(k.descriptor.vgpr_count() == d.at("next_free_vgpr"));
      CHECK(k.descriptor.enables_private_segment() == bool(d.at("enable_private_segment")));
      CHECK(k.descriptor.has(pm4::kcp_kernarg_segment_ptr) == bool(d.at("user_sgpr_kernarg_segment_ptr")));
      CHECK(k.descriptor.wave32() == bool(d.at("wavefront_size32")));
    }
  }
}

TEST_CASE("the entry point is the kernel's function symbol, in the loaded image") {
  for (const std::string& mcpu : targets) {
    for (const ir_kernel& kernel : our_kernels) {
      const std::string &file = kernel.file, &name = kernel.name;
      CAPTURE(mcpu);
      CAPTURE(name);
      const built& b = build(file, mcpu);
      std::vector<std::byte> so_bytes = read_bytes(b.so);
      code_object so(so_bytes);
      std::map<std::string, std::uint64_t> sym = readelf_symbols(b.so);
      const code_object_kernel& k = so.kernel(name);
      CHECK(k.descriptor_offset == sym.at(name + ".kd"));
      CHECK(k.entry_offset == sym.at(name));
      CHECK(so.load_alignment() == 0x1000);  // ld.lld's PT_LOAD p_align (max page size)
      // The llc object, laid out and relocated (REL64 in .rela.rodata) by tg, reaches the same code
      // (globals.ll's object needs a GOT, which only the linker builds).
      if (file == "globals") continue;
      code_object obj(read_bytes(b.obj));
      const code_object_kernel& ko = obj.kernel(name);
      std::vector<std::byte> a = so.image_at(gpu_va{0x10000}), c = obj.image_at(gpu_va{0x20000});
      constexpr std::size_t n = 64;  // the first instructions
      REQUIRE(k.entry_offset + n <= a.size());
      REQUIRE(ko.entry_offset + n <= c.size());
      CHECK(std::equal(a.begin() + k.entry_offset, a.begin() + k.entry_offset + n, c.begin() + ko.entry_offset));
      CHECK(ko.descriptor.compute_pgm_rsrc1 == k.descriptor.compute_pgm_rsrc1);
      CHECK(ko.descriptor.kernarg_size == k.descriptor.kernarg_size);
    }
  }
}

TEST_CASE("the relocations ld.lld leaves in .rela.dyn are applied as llvm-readelf lists them") {
  for (const std::string& mcpu : targets) {
    CAPTURE(mcpu);
    const built& b = build("globals", mcpu);
    code_object co(read_bytes(b.so));
    constexpr std::uint64_t base = 0x7F12'3456'7000;
    std::vector<std::byte> image = co.image_at(gpu_va{base});
    std::istringstream in(must_run(tool.readelf + " --relocs --wide " + quote(b.so)));
    std::string line;
    static const std::regex abs64(R"(^([0-9a-f]+)\s+[0-9a-f]+\s+R_AMDGPU_ABS64\s+([0-9a-f]+)\s+\S+ \+ ([0-9a-f]+)\s*$)");
    static const std::regex relative(R"(^([0-9a-f]+)\s+[0-9a-f]+\s+R_AMDGPU_RELATIVE64\s+([0-9a-f]+)\s*$)");
    int abs_count = 0, relative_count = 0;
    std::smatch m;
    while (std::getline(in, line)) {
      CAPTURE(line);
      if (std::regex_match(line, m, abs64)) {
        ++abs_count;
        CHECK(u64_at(image, std::stoull(m[1], nullptr, 16)) ==
              base + std::stoull(m[2], nullptr, 16) + std::stoull(m[3], nullptr, 16));
      } else if (std::regex_match(line, m, relative)) {
        ++relative_count;
        CHECK(u64_at(image, std::stoull(m[1], nullptr, 16)) == base + std::stoull(m[2], nullptr, 16));
      }
    }
    CHECK(abs_count >= 1);
    CHECK(relative_count >= 1);
  }
}

TEST_CASE("REL32_LO/HI call offsets in an llc object resolve as ld.lld resolves them") {
  // recursive's call to depth is .text-relative in both layouts, so the relocated code must agree.
  for (const std::string& mcpu : targets) {
    CAPTURE(mcpu);
    const built& b = build("recursive", mcpu);
    code_object so(read_bytes(b.so)), obj(read_bytes(b.obj));
    std::string sections = must_run(tool.readelf + " --sections --wide " + quote(b.so));
    std::smatch m;
    REQUIRE(std::regex_search(sections, m, std::regex(R"(\.text\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+))")));
    std::uint64_t text_so = std::stoull(m[1], nullptr, 16), size = std::stoull(m[2], nullptr, 16);
    // In an ET_REL object symbol values are section-relative: where tg put .text follows.
    std::uint64_t text_o = obj.kernel("recursive").entry_offset - readelf_symbols(b.obj).at("recursive");
    std::vector<std::byte> a = so.image_at(gpu_va{0x40000}), c = obj.image_at(gpu_va{0x80000});
    REQUIRE(text_so + size <= a.size());
    REQUIRE(text_o + size <= c.size());
    CHECK(std::equal(a.begin() + text_so, a.begin() + text_so + size, c.begin() + text_o));
    // ... and the relocations changed something: llc leaves zeros where they patch.
    std::map<std::uint64_t, std::uint8_t> raw = objdump_contents(b.obj, ".text");
    int changed = 0;
    for (auto [at, byte] : raw) changed += std::uint8_t(c[text_o + at]) != byte;
    CHECK(changed > 0);
  }
}

TEST_CASE("the summary drives pm4::emit_dispatch with the entry at the load address") {
  for (const std::string& mcpu : targets) {
    CAPTURE(mcpu);
    const built& b = build("lds", mcpu);
    code_object co(read_bytes(b.so));
    CHECK(co.gfx() == (mcpu == "gfx1100" ? pm4::gfx_version::gfx11 : pm4::gfx_version::gfx12));
    constexpr std::uint64_t base = 0x0000'7F00'1234'0000;
    pm4::kernel_summary k = co.summary("reverse_tile", gpu_va{base});
    CHECK(k.entry == gpu_va{base + readelf_symbols(b.so).at("reverse_tile")});
    CHECK(k.group_segment_bytes == amdhsa_directives(b.asm_text, "reverse_tile").at("group_segment_fixed_size"));
    pm4::dispatch_args a{co.gfx(), {4, 1, 1}, {256, 1, 1}, gpu_va{0x8000'0000}, gpu_va{0x9000'0000}};
    std::vector<std::uint32_t> sgprs = pm4::user_sgprs(k, a);
    CHECK(sgprs == std::vector<std::uint32_t>{0x8000'0000, 0});  // the kernarg pointer alone
    tg::queue::cmd_buffer cb;
    pm4::emit_dispatch(cb, k, a);
    CHECK(cb.size() == pm4::dispatch_dwords(sgprs.size()));
    CHECK(std::find(cb.begin(), cb.end(), std::uint32_t(k.entry.value >> 8)) != cb.end());
  }
}

TEST_CASE("kernarg offsets match the .args offsets in llc's metadata") {
  struct expect {
    const char* file;
    const char* name;
    std::vector<kernarg> args;
  };
  const expect cases[] = {
      {"add", "add", {kernarg_pointer, kernarg_pointer, kernarg_pointer}},
      {"add", "add_defaults", {kernarg_pointer, kernarg_pointer, kernarg_pointer}},
      {"scratch", "private_array", {kernarg_pointer, kernarg_u32}},
      {"globals", "lookup", {kernarg_u32, kernarg_pointer, kernarg_u64, kernarg_u32}},
  };
  for (const std::string& mcpu : targets) {
    for (const expect& e : cases) {
      CAPTURE(mcpu);
      CAPTURE(e.name);
      const built& b = build(e.file, mcpu);
      code_object co(read_bytes(b.so));
      kernarg_layout l = layout_kernargs(co.kernel(e.name), e.args);
      CHECK(l.offsets == metadata_arg_offsets(b.asm_text, e.name));
      std::map<std::string, long long> d = amdhsa_directives(b.asm_text, e.name);
      CHECK(l.kernarg_bytes == d.at("kernarg_size"));
      CHECK(l.dispatch_packet_offset.has_value() == bool(d.at("user_sgpr_dispatch_ptr")));
      CHECK(l.alloc_bytes == d.at("kernarg_size") + (d.at("user_sgpr_dispatch_ptr") ? 64 : 0));
    }
  }
}

TEST_CASE("LLVM kernels that need what tg does not provide are refused by name and field") {
  for (const std::string& mcpu : targets) {
    CAPTURE(mcpu);
    const std::string only = " is set; tg provides only the private segment buffer, dispatch pointer and kernarg "
                             "pointer user SGPRs";
    code_object add(read_bytes(build("add", mcpu).so));
    CHECK_NOTHROW(add.summary("add", gpu_va{0}));
    CHECK_THROWS_WITH_AS(add.summary("add_defaults", gpu_va{0}), ("code object: kernel 'add_defaults': "
                         "kernel_code_properties.ENABLE_SGPR_DISPATCH_ID" + only +
                         "; compile with \"amdgpu-no-dispatch-id\"").c_str(), usage_error);
    code_object queue(read_bytes(build("queue_ptr", mcpu).so));
    CHECK_THROWS_WITH_AS(queue.summary("queue_reader", gpu_va{0}), ("code object: kernel 'queue_reader': "
                         "kernel_code_properties.ENABLE_SGPR_QUEUE_PTR" + only +
                         "; compile for code object v5 with \"amdgpu-no-queue-ptr\"").c_str(), usage_error);
    const built& r = build("recursive", mcpu);
    code_object rec(read_bytes(r.so));
    long long stack = amdhsa_directives(r.asm_text, "recursive").at("private_segment_fixed_size");
    CHECK_THROWS_WITH_AS(rec.summary("recursive", gpu_va{0}), tg::str("code object: kernel 'recursive': "
                         "kernel_code_properties.USES_DYNAMIC_STACK is set (recursion, indirect calls or dynamic "
                         "allocas); tg sizes scratch from private_segment_fixed_size (", stack, " bytes) only").c_str(),
                         usage_error);
  }
}

TEST_CASE("an llc object that needs a GOT is refused, naming the relocation") {
  const built& b = build("globals", "gfx1100");
  std::istringstream in(must_run(tool.readelf + " --relocs --wide " + quote(b.obj)));
  std::string line, section;
  int index = -1, first_got = -1;
  std::string got_type;
  std::smatch m;
  while (std::getline(in, line) && first_got < 0) {
    if (std::regex_search(line, m, std::regex(R"(Relocation section '([^']+)')"))) section = m[1], index = -1;
    else if (std::regex_search(line, m, std::regex(R"(^[0-9a-f]+\s+[0-9a-f]+\s+(R_AMDGPU_\w+))"))) {
      ++index;
      if (section == ".rela.text" && m.str(1).find("GOTPCREL") != std::string::npos) first_got = index, got_type = m[1];
    }
  }
  REQUIRE(first_got >= 0);
  CHECK_THROWS_WITH_AS(code_object(read_bytes(b.obj)), tg::str("code object: relocation ", first_got, " of section "
                       "'.rela.text': relocation ", got_type, " is not supported (it needs a GOT; link the object "
                       "with ld.lld -shared, which builds one)").c_str(), usage_error);
}

TEST_CASE("corrupt or foreign LLVM code objects fail with exact messages") {
  const built& b = build("add", "gfx1100");
  std::vector<std::byte> f = read_bytes(b.so);
  SUBCASE("truncated") {
    std::uint64_t shoff = readelf_header_number(b.so, "Start of section headers");
    std::uint64_t shnum = readelf_header_number(b.so, "Number of section headers");
    f.resize(shoff + 10);
    CHECK_THROWS_WITH_AS(code_object{f}, tg::str("code object: section header table (offset ", shoff, ", ", shnum,
                         " entries of 64 bytes) runs past the end of the file (", shoff + 10,
                         " bytes); the file is truncated").c_str(), usage_error);
  }
  SUBCASE("wrong machine") {
    elf::store_le(std::span(f), 18, std::uint16_t{62});  // e_machine = EM_X86_64
    CHECK_THROWS_WITH_AS(code_object{f}, "code object: e_machine 62 is not EM_AMDGPU (224); compile with llc "
                         "-mtriple=amdgcn-amd-amdhsa", usage_error);
  }
  SUBCASE("another gfx11 chip") {
    const built& other = build("add", "gfx1103");
    CHECK_THROWS_WITH_AS(code_object(read_bytes(other.so)), "code object: e_flags mach 0x44 (gfx1103) is not "
                         "supported; tg loads gfx1100 and gfx1200 code objects (llc -mcpu=gfx1100 or -mcpu=gfx1200)",
                         usage_error);
  }
  SUBCASE("no .kd symbol") {
    // Rename every "<kernel>.kd" string (both string tables) to "<kernel>.kx".
    const std::string kd = ".kd";
    for (std::size_t i = 0; i + kd.size() < f.size(); ++i)
      if (std::memcmp(f.data() + i, kd.data(), kd.size()) == 0 && f[i + kd.size()] == std::byte{0})
        f[i + 2] = std::byte('x');
    CHECK_THROWS_WITH_AS(code_object{f}, "code object: no kernel descriptor symbols (<kernel>.kd) in .symtab; was it "
                         "compiled from an amdgpu_kernel function?", usage_error);
  }
}

}  // TEST_SUITE("llvm")

// --llvm: run the "llvm" suite, or exit 77 without the tools. Otherwise: everything else.
int main(int argc, char** argv) {
  std::vector<char*> args;
  bool llvm = false;
  for (int i = 0; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--llvm") llvm = true;
    else args.push_back(argv[i]);
  }
  doctest::Context context(int(args.size()), args.data());
  if (!llvm) {
    context.addFilter("test-suite-exclude", "llvm");
    return context.run();
  }
  tool = {env_or("TG_LLC", "llc-19"), env_or("TG_LLD", "ld.lld-19"), env_or("TG_READELF", "llvm-readelf-19"),
          env_or("TG_OBJDUMP", "llvm-objdump-19"), env_or("TG_AMD_KERNELS", ""), {}};
  for (const std::string& t : {tool.llc, tool.lld, tool.readelf, tool.objdump}) {
    if (!run(t + " --version").first) {
      std::fprintf(stderr, "skipped: %s is not there (apt-get install llvm-19 lld-19)\n", t.c_str());
      return 77;
    }
  }
  if (tool.kernels.empty() || !fs::is_directory(tool.kernels)) {
    std::fprintf(stderr, "skipped: TG_AMD_KERNELS does not name tests/drivers/amd/kernels\n");
    return 77;
  }
  tool.work = fs::temp_directory_path() / ("tg_code_object_test_" + std::to_string(getpid()));
  fs::create_directories(tool.work);
  context.addFilter("test-suite", "llvm");
  int rc = context.run();
  fs::remove_all(tool.work);
  return rc;
}
