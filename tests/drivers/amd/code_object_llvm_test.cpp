// code_object_llvm_test.cpp: the AMDGPU code-object loader against LLVM 19's own tools.
//
// Builds code objects at test time from kernels/*.ll with llc-19 (gfx1100, gfx1200) and
// ld.lld-19 -shared, and checks what the loader reads against goldens from LLVM: the .amdhsa_*
// directives and .args metadata of `llc -filetype=asm` for the same IR, llvm-objdump's hex dump
// and descriptor decoding, and llvm-readelf's symbols, sections and relocations. Exits 77
// (skipped) when the tools are missing (TG_LLC, TG_LLD, TG_READELF, TG_OBJDUMP name them; meson
// finds them).
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
using tg::memory::gpu_va;
namespace pm4 = tg::queue::pm4;


namespace {

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

// ================================================ code objects built by LLVM 19 at test time ====


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
        CHECK(elf::load_le<std::uint64_t>(image, std::stoull(m[1], nullptr, 16)) ==
              base + std::stoull(m[2], nullptr, 16) + std::stoull(m[3], nullptr, 16));
      } else if (std::regex_match(line, m, relative)) {
        ++relative_count;
        CHECK(elf::load_le<std::uint64_t>(image, std::stoull(m[1], nullptr, 16)) == base + std::stoull(m[2], nullptr, 16));
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


// Exits 77 (skipped) without the tools; otherwise runs every test here in a scratch folder.
int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
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
  int rc = context.run();
  fs::remove_all(tool.work);
  return rc;
}
