// elf_reader.hpp: a bounds-checked reader for the little-endian ELF64 files LLVM writes for AMDGPU.
//
// Only what a code-object loader needs: the file header, section and program headers, symbols and
// RELA entries. Every offset and size read from the file is checked against the file before use;
// a corrupt or truncated file throws tg::usage_error ("code object: ..."), never asserts.
// Layouts are the System V gABI's (Object Files chapter: ELF Header, Sections, Symbol Table,
// Relocation, Program Header), which LLVM spells out in llvm/BinaryFormat/ELF.h.
//
//   tg::amd::elf::file f(bytes);
//   for (const tg::amd::elf::section& s : f.sections())
//     if (s.type == tg::amd::elf::sht_symtab) for (auto& sym : f.symbols(s)) use(sym.name);
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tg::amd::elf {

// e_ident and e_type / e_machine values (gABI; ELF.h)
inline constexpr std::uint8_t elfclass64 = 2;
inline constexpr std::uint8_t elfdata2lsb = 1;
inline constexpr std::uint16_t et_rel = 1;
inline constexpr std::uint16_t et_dyn = 3;
inline constexpr std::uint16_t em_amdgpu = 224;  // ELF.h EM_AMDGPU

// sh_type, sh_flags, special section indices (gABI; ELF.h)
inline constexpr std::uint32_t sht_progbits = 1;
inline constexpr std::uint32_t sht_symtab = 2;
inline constexpr std::uint32_t sht_strtab = 3;
inline constexpr std::uint32_t sht_rela = 4;
inline constexpr std::uint32_t sht_nobits = 8;
inline constexpr std::uint32_t sht_rel = 9;
inline constexpr std::uint32_t sht_dynsym = 11;
inline constexpr std::uint64_t shf_alloc = 0x2;
inline constexpr std::uint64_t shf_execinstr = 0x4;
inline constexpr std::uint16_t shn_undef = 0;
inline constexpr std::uint16_t shn_loreserve = 0xFF00;
inline constexpr std::uint16_t shn_abs = 0xFFF1;

// p_type, p_flags (gABI; ELF.h)
inline constexpr std::uint32_t pt_load = 1;
inline constexpr std::uint32_t pf_x = 0x1;

// st_info type (low 4 bits; gABI; ELF.h)
inline constexpr std::uint8_t stt_object = 1;
inline constexpr std::uint8_t stt_func = 2;

// Entry sizes of ELF64 tables (gABI: Elf64_Ehdr, Elf64_Shdr, Elf64_Phdr, Elf64_Sym, Elf64_Rela).
inline constexpr std::size_t ehdr_bytes = 64;
inline constexpr std::size_t shdr_bytes = 64;
inline constexpr std::size_t phdr_bytes = 56;
inline constexpr std::size_t sym_bytes = 24;
inline constexpr std::size_t rela_bytes = 24;

struct header {
  std::uint8_t os_abi = 0;       // e_ident[EI_OSABI]
  std::uint8_t abi_version = 0;  // e_ident[EI_ABIVERSION]
  std::uint16_t type = 0;        // e_type
  std::uint16_t machine = 0;     // e_machine
  std::uint32_t flags = 0;       // e_flags
};

struct section {
  std::size_t index = 0;
  std::string_view name;  // from .shstrtab
  std::uint32_t type = 0;
  std::uint64_t flags = 0, addr = 0, offset = 0, size = 0;
  std::uint32_t link = 0, info = 0;
  std::uint64_t addralign = 0, entsize = 0;
};

struct segment {
  std::uint32_t type = 0, flags = 0;
  std::uint64_t offset = 0, vaddr = 0, filesz = 0, memsz = 0, align = 0;
};

struct symbol {
  std::string_view name;
  std::uint8_t type = 0;  // st_info & 0xF
  std::uint16_t shndx = 0;
  std::uint64_t value = 0, size = 0;
};

struct rela {
  std::uint64_t offset = 0;
  std::uint32_t type = 0;    // ELF64_R_TYPE: r_info & 0xFFFFFFFF
  std::uint32_t symbol = 0;  // ELF64_R_SYM: r_info >> 32
  std::int64_t addend = 0;
};

// A view of an ELF64 little-endian file; `bytes` must outlive it (names are views into it).
class file {
 public:
  explicit file(std::span<const std::byte> bytes);

  const header& head() const { return head_; }
  std::span<const section> sections() const { return sections_; }
  std::span<const segment> segments() const { return segments_; }
  // The file bytes of a section (empty for SHT_NOBITS) or a segment's p_filesz bytes.
  std::span<const std::byte> contents(const section& s) const;
  std::span<const std::byte> contents(const segment& p) const;
  // Entries of a SHT_SYMTAB / SHT_DYNSYM section, names from its sh_link string table.
  std::vector<symbol> symbols(const section& symtab) const;
  // Entries of a SHT_RELA section.
  std::vector<rela> relocations(const section& rela_section) const;

 private:
  std::string_view string_at(const section& strtab, std::uint64_t offset, std::string_view what) const;
  const section& linked_section(const section& s, std::string_view what) const;

  std::span<const std::byte> bytes_;
  header head_;
  std::vector<section> sections_;
  std::vector<segment> segments_;
};

// Little-endian load of a T (uint8..uint64, int64) at `offset`; the caller checks the bounds.
template <class T>
T load_le(std::span<const std::byte> bytes, std::size_t offset) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= std::uint64_t(bytes[offset + i]) << (8 * i);
  return static_cast<T>(v);
}

template <class T>
void store_le(std::span<std::byte> bytes, std::size_t offset, T value) {
  auto v = static_cast<std::uint64_t>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) bytes[offset + i] = std::byte((v >> (8 * i)) & 0xFF);
}

}  // namespace tg::amd::elf
