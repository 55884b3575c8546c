// code_object.cpp: header checks, image layout, relocation resolving and kernel discovery.
#include "drivers/amd/code_object.hpp"

#include <algorithm>

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

#include "drivers/amd/elf_reader.hpp"

namespace tg::amd {
namespace {

// A guard against sizes read from a corrupt file; LLVM kernels are kilobytes.
constexpr std::uint64_t max_image_bytes = std::uint64_t{256} << 20;
// COMPUTE_PGM_LO holds the entry address >> 8 (gc_11_0_0_sh_mask.h: COMPUTE_PGM_LO__DATA; AMDGPUUsage: the entry "must be
// 256 byte aligned").
constexpr std::uint64_t entry_alignment = 256;
constexpr std::uint64_t no_offset = ~std::uint64_t{0};

// EF_AMDGPU_MACH_AMDGCN_* of the families a user might hand us by mistake (LLVM 19 ELF.h).
struct mach_entry {
  std::uint32_t mach;
  std::string_view name;
};
constexpr mach_entry machs[] = {
    {0x02c, "gfx900"},  {0x02f, "gfx906"},   {0x030, "gfx908"},   {0x03f, "gfx90a"},   {0x040, "gfx940"},
    {0x04b, "gfx941"},  {0x04c, "gfx942"},   {0x033, "gfx1010"},  {0x034, "gfx1011"},  {0x035, "gfx1012"},
    {0x042, "gfx1013"}, {0x036, "gfx1030"},  {0x037, "gfx1031"},  {0x038, "gfx1032"},  {0x039, "gfx1033"},
    {0x03e, "gfx1034"}, {0x03d, "gfx1035"},  {0x045, "gfx1036"},  {0x041, "gfx1100"},  {0x046, "gfx1101"},
    {0x047, "gfx1102"}, {0x044, "gfx1103"},  {0x043, "gfx1150"},  {0x04a, "gfx1151"},  {0x055, "gfx1152"},
    {0x048, "gfx1200"}, {0x04e, "gfx1201"},  {0x051, "gfx9-generic"}, {0x052, "gfx10-1-generic"},
    {0x053, "gfx10-3-generic"}, {0x054, "gfx11-generic"}, {0x059, "gfx12-generic"},
};

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

gfx_target check_header(const elf::header& h) {
  if (h.machine != elf::em_amdgpu)
    throw usage_error(str("code object: e_machine ", h.machine, " is not EM_AMDGPU (", elf::em_amdgpu,
                          "); compile with llc -mtriple=amdgcn-amd-amdhsa"));
  if (h.os_abi != elfosabi_amdgpu_hsa)
    throw usage_error(str("code object: EI_OSABI ", int(h.os_abi), " is not ELFOSABI_AMDGPU_HSA (",
                          int(elfosabi_amdgpu_hsa), "); compile with llc -mtriple=amdgcn-amd-amdhsa"));
  if (h.abi_version < elfabiversion_amdgpu_hsa_v3 || h.abi_version > elfabiversion_amdgpu_hsa_v6)
    throw usage_error(str("code object: EI_ABIVERSION ", int(h.abi_version), " (code object v", h.abi_version + 2,
                          ") is not supported; tg reads the kernel descriptors of code object v3 to v6"));
  if (h.type != elf::et_rel && h.type != elf::et_dyn)
    throw usage_error(str("code object: e_type ", h.type, " is neither ET_REL (1) nor ET_DYN (3)"));
  std::uint32_t mach = h.flags & ef_amdgpu_mach;
  if (mach == ef_amdgpu_mach_gfx1100) return gfx_target::gfx1100;
  if (mach == ef_amdgpu_mach_gfx1200) return gfx_target::gfx1200;
  // gfx1101 / gfx1102 run gfx1100's ISA and gfx1201 gfx1200's (AMDGPUUsage.rst, "Processors"); what
  // differs (gfx1100 / gfx1102's user-SGPR padding) is in each kernel's descriptor.
  if (mach == 0x046 || mach == 0x047) return gfx_target::gfx1100;  // EF_AMDGPU_MACH_AMDGCN_GFX1101 / GFX1102
  if (mach == 0x04e) return gfx_target::gfx1200;                   // EF_AMDGPU_MACH_AMDGCN_GFX1201
  std::string_view name = mach_name(mach);
  throw usage_error(str("code object: e_flags mach ", hex{mach},
                        name.empty() ? "" : " (", name, name.empty() ? "" : ")",
                        " is not supported; tg loads gfx1100 and gfx1200 code objects (llc -mcpu=gfx1100 or "
                        "-mcpu=gfx1200)"));
}

// Where a symbol is: an image offset, or an absolute value (SHN_ABS). ET_DYN symbols hold vaddrs,
// which are image offsets; ET_REL ones are relative to their section's image offset.
struct symbol_place {
  bool absolute;
  std::uint64_t value;
};

symbol_place resolve(const elf::symbol& sym, std::span<const std::uint64_t> section_offsets, std::string_view where) {
  if (sym.shndx == elf::shn_undef)
    throw usage_error(str("code object: ", where, " refers to the undefined symbol '", sym.name,
                          "' (tg links no libraries; define it in the kernel's module)"));
  if (sym.shndx == elf::shn_abs) return {true, sym.value};
  if (section_offsets.empty()) return {false, sym.value};
  if (sym.shndx >= section_offsets.size() || section_offsets[sym.shndx] == no_offset)
    throw usage_error(str("code object: ", where, " refers to symbol '", sym.name, "' in section ", sym.shndx,
                          ", which is not loaded"));
  return {false, section_offsets[sym.shndx] + sym.value};
}

// Turns the entries of one RELA section into fixups at image offsets base + r_offset.
void add_fixups(const elf::file& f, const elf::section& rela, std::uint64_t base, std::uint64_t limit,
                std::uint64_t image_bytes, std::span<const std::uint64_t> section_offsets, std::vector<fixup>& out) {
  std::vector<elf::symbol> symbols;
  if (rela.link != 0) {
    if (rela.link >= f.sections().size() || (f.sections()[rela.link].type != elf::sht_symtab &&
                                             f.sections()[rela.link].type != elf::sht_dynsym))
      throw usage_error(str("code object: relocation section '", rela.name, "' links to section ", rela.link,
                            ", which is not a symbol table"));
    symbols = f.symbols(f.sections()[rela.link]);
  }
  std::vector<elf::rela> entries = f.relocations(rela);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const elf::rela& r = entries[i];
    std::string where = str("relocation ", i, " of section '", rela.name, "'");
    std::size_t width = reloc_width(r.type, where);
    if (r.offset > limit || width > limit - r.offset || base + r.offset > image_bytes)
      throw usage_error(str("code object: ", where, " patches offset ", hex{r.offset},
                            ", outside what it relocates (", hex{limit}, " bytes)"));
    fixup fx{base + r.offset, r.type, true, 0, r.addend};
    if (r.symbol != 0) {
      if (r.symbol >= symbols.size())
        throw usage_error(str("code object: ", where, " names symbol ", r.symbol, " of ", symbols.size()));
      symbol_place s = resolve(symbols[r.symbol], section_offsets, where);
      fx.symbol_is_absolute = s.absolute;
      fx.symbol = s.value;
    }
    out.push_back(fx);
  }
}

}  // namespace

std::string_view mach_name(std::uint32_t mach) {
  for (const mach_entry& m : machs)
    if (m.mach == mach) return m.name;
  return {};
}

code_object::code_object(std::span<const std::byte> elf_bytes) {
  elf::file f(elf_bytes);
  target_ = check_header(f.head());
  mach_ = f.head().flags & ef_amdgpu_mach;
  if (f.sections().empty())
    throw usage_error("code object: no section headers; tg finds kernels through the symbol table");
  if (f.head().type == elf::et_dyn) load_segments(f);
  else load_sections(f);
  find_kernels(f);
}

queue::pm4::gfx_version code_object::gfx() const {
  return target_ == gfx_target::gfx1100 ? queue::pm4::gfx_version::gfx11 : queue::pm4::gfx_version::gfx12;
}

// ET_DYN: PT_LOAD segments at their p_vaddr; .rela.dyn (SHF_ALLOC RELA sections) to apply.
void code_object::load_segments(const elf::file& f) {
  std::uint64_t end = 0;
  bool any = false;
  for (const elf::segment& p : f.segments()) {
    if (p.type != elf::pt_load) continue;
    any = true;
    if (p.align > max_image_bytes || (p.align > 1 && !is_power_of_two(p.align)))
      throw usage_error(str("code object: a PT_LOAD segment has p_align ", p.align,
                            ", not a power of two up to the image limit"));
    if (p.memsz > max_image_bytes || p.vaddr > max_image_bytes - p.memsz)
      throw usage_error(str("code object: a PT_LOAD segment ends at vaddr ", hex{p.vaddr + p.memsz},
                            ", past the ", hex{max_image_bytes}, " bytes tg loads (is the file corrupt?)"));
    alignment_ = std::max(alignment_, p.align);
    end = std::max(end, p.vaddr + p.memsz);
  }
  if (!any) throw usage_error("code object: a shared object without PT_LOAD segments has nothing to load");
  image_.assign(end, std::byte{0});
  for (const elf::segment& p : f.segments()) {
    if (p.type != elf::pt_load) continue;
    std::span<const std::byte> bytes = f.contents(p);
    std::copy(bytes.begin(), bytes.end(), image_.begin() + std::ptrdiff_t(p.vaddr));
    if (p.flags & elf::pf_x) code_ranges_.emplace_back(p.vaddr, p.vaddr + p.memsz);
  }
  for (const elf::section& s : f.sections()) {
    // Non-SHF_ALLOC RELA sections (ld.lld --emit-relocs) describe relocations the linker applied.
    if (!(s.flags & elf::shf_alloc) || (s.type != elf::sht_rela && s.type != elf::sht_rel)) continue;
    if (s.type == elf::sht_rel)
      throw usage_error(str("code object: relocation section '", s.name, "' is SHT_REL; tg applies SHT_RELA only"));
    add_fixups(f, s, 0, end, end, {}, fixups_);
  }
}

// ET_REL: SHF_ALLOC PROGBITS/NOBITS sections appended at their alignment; RELA sections that target
// a loaded section to apply (the others relocate debug info and the like).
void code_object::load_sections(const elf::file& f) {
  std::span<const elf::section> sections = f.sections();
  section_offsets_.assign(sections.size(), no_offset);
  std::uint64_t cursor = 0;
  for (const elf::section& s : sections) {
    if (!(s.flags & elf::shf_alloc) || (s.type != elf::sht_progbits && s.type != elf::sht_nobits)) continue;
    std::uint64_t align = std::max<std::uint64_t>(s.addralign, 1);
    if (!is_power_of_two(align))
      throw usage_error(str("code object: section '", s.name, "' has sh_addralign ", s.addralign,
                            ", not a power of two"));
    if (align > max_image_bytes || s.size > max_image_bytes || cursor + align + s.size > max_image_bytes)
      throw usage_error(str("code object: section '", s.name, "' (", s.size, " bytes, alignment ", align,
                            ") takes the image past the ", max_image_bytes, " bytes tg loads (is the file corrupt?)"));
    std::uint64_t at = (cursor + align - 1) & ~(align - 1);
    section_offsets_[s.index] = at;
    cursor = at + s.size;
    alignment_ = std::max(alignment_, align);
    if (s.flags & elf::shf_execinstr) code_ranges_.emplace_back(at, cursor);
  }
  image_.assign(cursor, std::byte{0});
  for (const elf::section& s : sections) {
    if (section_offsets_[s.index] == no_offset) continue;
    std::span<const std::byte> bytes = f.contents(s);  // empty for NOBITS: stays zero
    std::copy(bytes.begin(), bytes.end(), image_.begin() + std::ptrdiff_t(section_offsets_[s.index]));
  }
  for (const elf::section& s : sections) {
    if (s.type != elf::sht_rela && s.type != elf::sht_rel) continue;
    if (s.info >= sections.size() || section_offsets_[s.info] == no_offset) continue;
    if (s.type == elf::sht_rel)
      throw usage_error(str("code object: relocation section '", s.name, "' is SHT_REL; tg applies SHT_RELA only"));
    add_fixups(f, s, section_offsets_[s.info], sections[s.info].size, image_.size(), section_offsets_, fixups_);
  }
}

void code_object::find_kernels(const elf::file& f) {
  // .symtab when there is one (ld.lld keeps it); .dynsym, which also lists every .kd, otherwise.
  const elf::section* table = nullptr;
  for (std::uint32_t type : {elf::sht_symtab, elf::sht_dynsym}) {
    for (const elf::section& s : f.sections())
      if (table == nullptr && s.type == type) table = &s;
  }
  if (table == nullptr) throw usage_error("code object: no symbol table (.symtab or .dynsym) to find kernels in");
  std::vector<std::byte> relocated = image_at(gpu_va{0});  // the entry offsets are PC-relative: any address will do
  for (const elf::symbol& sym : f.symbols(*table)) {
    constexpr std::string_view suffix = ".kd";
    if (sym.name.size() <= suffix.size() || !sym.name.ends_with(suffix) || sym.shndx == elf::shn_undef) continue;
    std::string name(sym.name.substr(0, sym.name.size() - suffix.size()));
    if (std::any_of(kernels_.begin(), kernels_.end(), [&](auto& k) { return k.name == name; })) continue;
    auto fail = [&](auto&&... parts) { return usage_error(str("code object: kernel '", name, "': ", parts...)); };
    if (sym.size != kernel_descriptor_bytes)
      throw fail("symbol ", sym.name, " is ", sym.size, " bytes; a kernel descriptor is ", kernel_descriptor_bytes);
    symbol_place at = resolve(sym, section_offsets_, str("symbol ", sym.name));
    if (at.absolute || at.value > relocated.size() || relocated.size() - at.value < kernel_descriptor_bytes)
      throw fail("descriptor ", sym.name, " at ", hex{at.value}, " is not inside the image (",
                 hex{relocated.size()}, " bytes)");
    kernel_descriptor kd = decode_kernel_descriptor(
        std::span<const std::byte>(relocated).subspan(at.value).first<kernel_descriptor_bytes>());
    std::uint64_t entry = at.value + std::uint64_t(kd.kernel_code_entry_byte_offset);
    bool in_code = std::any_of(code_ranges_.begin(), code_ranges_.end(),
                               [&](auto& r) { return entry >= r.first && entry < r.second; });
    if (!in_code)
      throw fail("kernel_code_entry_byte_offset ", kd.kernel_code_entry_byte_offset,
                 " puts the entry outside the executable code (descriptor at image offset ", hex{at.value},
                 ")");
    if (entry % entry_alignment != 0)
      throw fail("kernel_code_entry_byte_offset puts the entry at image offset ", hex{entry},
                 ", which is not 256-byte aligned (COMPUTE_PGM_LO holds the address >> 8)");
    kernels_.push_back({std::move(name), at.value, entry, kd});
  }
  if (kernels_.empty())
    throw usage_error(str("code object: no kernel descriptor symbols (<kernel>.kd) in ", table->name,
                          "; was it compiled from an amdgpu_kernel function?"));
}

std::vector<std::byte> code_object::image_at(gpu_va load_address) const {
  std::vector<std::byte> image = image_;
  apply_fixups(image, fixups_, load_address.value);
  return image;
}

const code_object_kernel& code_object::kernel(std::string_view name) const {
  for (const code_object_kernel& k : kernels_)
    if (k.name == name) return k;
  std::string names;
  for (const code_object_kernel& k : kernels_) names += (names.empty() ? "" : ", ") + k.name;
  throw usage_error(str("code object: no kernel '", name, "'; it has ", names));
}

queue::pm4::kernel_summary code_object::summary(std::string_view name, gpu_va load_address) const {
  const code_object_kernel& k = kernel(name);
  const kernel_descriptor& kd = k.descriptor;
  if (!load_address.is_aligned(alignment_))
    throw usage_error(str("code object: load address ", load_address,
                          " is not a multiple of the code object's alignment ", hex{alignment_}));
  auto fail = [&](auto&&... parts) { return usage_error(str("code object: kernel '", k.name, "': ", parts...)); };
  // User SGPRs beyond what pm4::user_sgprs writes (llvm/docs/AMDGPUUsage.rst); the attribute that turns each off.
  struct sgpr {
    std::uint16_t bit;
    std::string_view field, fix;
  };
  constexpr sgpr unsupported[] = {
      {queue::pm4::kcp_queue_ptr, "ENABLE_SGPR_QUEUE_PTR", "; compile for code object v5 with \"amdgpu-no-queue-ptr\""},
      {queue::pm4::kcp_dispatch_id, "ENABLE_SGPR_DISPATCH_ID", "; compile with \"amdgpu-no-dispatch-id\""},
      {queue::pm4::kcp_flat_scratch_init, "ENABLE_SGPR_FLAT_SCRATCH_INIT", ""},
      {queue::pm4::kcp_private_segment_size, "ENABLE_SGPR_PRIVATE_SEGMENT_SIZE", ""},
  };
  for (const sgpr& s : unsupported)
    if (kd.has(s.bit))
      throw fail("kernel_code_properties.", s.field, " is set; tg provides only the private segment buffer, "
                 "dispatch pointer and kernarg pointer user SGPRs", s.fix);
  if (kd.uses_dynamic_stack())
    throw fail("kernel_code_properties.USES_DYNAMIC_STACK is set (recursion, indirect calls or dynamic allocas); "
               "tg sizes scratch from private_segment_fixed_size (", kd.private_segment_fixed_size, " bytes) only");
  if (kd.kernarg_preload != 0)
    throw fail("kernarg_preload is ", hex{kd.kernarg_preload}, "; tg passes kernel arguments in memory only");
  return {load_address + k.entry_offset,
          kd.group_segment_fixed_size,
          kd.kernarg_size,
          kd.compute_pgm_rsrc1,
          kd.compute_pgm_rsrc2,
          kd.compute_pgm_rsrc3,
          kd.kernel_code_properties};
}

}  // namespace tg::amd
