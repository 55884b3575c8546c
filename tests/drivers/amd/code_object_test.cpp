// code_object_test.cpp: the AMDGPU code-object loader on a small hand-built ELF: exact errors,
// relocation arithmetic, descriptor fields against the Linux register tables, and the kernarg
// layout. Needs no tools; code_object_llvm_test.cpp checks real LLVM 19 output.
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
