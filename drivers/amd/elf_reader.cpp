// elf_reader.cpp: ELF64 header, table and string parsing with every file offset checked.
#include "drivers/amd/elf_reader.hpp"

#include <algorithm>
#include <cstring>

#include <tg/core/error.hpp>

namespace tg::amd::elf {
namespace {

// e_ident indices and the ELF magic (gABI, "ELF Identification").
constexpr std::size_t ei_class = 4, ei_data = 5, ei_version = 6, ei_osabi = 7, ei_abiversion = 8;
constexpr unsigned char elf_magic[4] = {0x7F, 'E', 'L', 'F'};

// True when [offset, offset + size) lies inside `total` bytes, without overflowing.
bool fits(std::uint64_t offset, std::uint64_t size, std::uint64_t total) {
  return offset <= total && size <= total - offset;
}

// Elf64_Ehdr field offsets (gABI "ELF Header"; the struct has no padding).
struct ehdr_at {
  static constexpr std::size_t type = 16, machine = 18, version = 20, phoff = 32, shoff = 40, flags = 48,
                               phentsize = 54, phnum = 56, shentsize = 58, shnum = 60, shstrndx = 62;
};

void check_table(std::uint64_t offset, std::uint64_t count, std::size_t entry, std::uint16_t entsize,
                 std::string_view what, std::size_t file_bytes) {
  if (count == 0) return;
  if (entsize != entry)
    throw usage_error(str("code object: ", what, " entries are ", entsize, " bytes; ELF64 uses ", entry));
  if (!fits(offset, count * entry, file_bytes))
    throw usage_error(str("code object: ", what, " table (offset ", offset, ", ", count, " entries of ", entry,
                          " bytes) runs past the end of the file (", file_bytes, " bytes); the file is truncated"));
}

}  // namespace

file::file(std::span<const std::byte> bytes) : bytes_(bytes) {
  if (bytes.size() < ehdr_bytes)
    throw usage_error(str("code object: ", bytes.size(), " bytes is too small for an ELF64 header (", ehdr_bytes,
                          " bytes); the file is truncated or not an ELF file"));
  if (std::memcmp(bytes.data(), elf_magic, sizeof elf_magic) != 0)
    throw usage_error("code object: not an ELF file (no 7f 45 4c 46 magic at offset 0)");
  auto ident = [&](std::size_t i) { return load_le<std::uint8_t>(bytes, i); };
  if (ident(ei_class) != elfclass64)
    throw usage_error(str("code object: ELF class ", int(ident(ei_class)),
                          " is not ELFCLASS64 (2); AMDGPU code objects are 64-bit ELF"));
  if (ident(ei_data) != elfdata2lsb)
    throw usage_error(str("code object: ELF data encoding ", int(ident(ei_data)),
                          " is not ELFDATA2LSB (1); AMDGPU code objects are little-endian"));
  if (ident(ei_version) != 1 || load_le<std::uint32_t>(bytes, ehdr_at::version) != 1)
    throw usage_error("code object: ELF version is not EV_CURRENT (1)");
  head_.os_abi = ident(ei_osabi);
  head_.abi_version = ident(ei_abiversion);
  head_.type = load_le<std::uint16_t>(bytes, ehdr_at::type);
  head_.machine = load_le<std::uint16_t>(bytes, ehdr_at::machine);
  head_.flags = load_le<std::uint32_t>(bytes, ehdr_at::flags);

  auto phoff = load_le<std::uint64_t>(bytes, ehdr_at::phoff);
  auto shoff = load_le<std::uint64_t>(bytes, ehdr_at::shoff);
  auto phnum = load_le<std::uint16_t>(bytes, ehdr_at::phnum);
  auto shnum = load_le<std::uint16_t>(bytes, ehdr_at::shnum);
  auto shstrndx = load_le<std::uint16_t>(bytes, ehdr_at::shstrndx);
  if (shnum == 0 && shoff != 0)  // gABI: the real count is then in section 0's sh_size
    throw usage_error("code object: extended section numbering (e_shnum 0) is not supported");
  check_table(phoff, phnum, phdr_bytes, load_le<std::uint16_t>(bytes, ehdr_at::phentsize), "program header",
              bytes.size());
  check_table(shoff, shnum, shdr_bytes, load_le<std::uint16_t>(bytes, ehdr_at::shentsize), "section header",
              bytes.size());

  for (std::size_t i = 0; i < phnum; ++i) {  // Elf64_Phdr
    std::size_t at = phoff + i * phdr_bytes;
    segment p{load_le<std::uint32_t>(bytes, at), load_le<std::uint32_t>(bytes, at + 4),
              load_le<std::uint64_t>(bytes, at + 8), load_le<std::uint64_t>(bytes, at + 16),
              load_le<std::uint64_t>(bytes, at + 32), load_le<std::uint64_t>(bytes, at + 40),
              load_le<std::uint64_t>(bytes, at + 48)};
    if (p.type == pt_load && !fits(p.offset, p.filesz, bytes.size()))
      throw usage_error(str("code object: program header ", i, " (offset ", p.offset, ", ", p.filesz,
                            " bytes) runs past the end of the file (", bytes.size(), " bytes); the file is truncated"));
    if (p.type == pt_load && p.filesz > p.memsz)
      throw usage_error(str("code object: program header ", i, " has p_filesz ", p.filesz, " > p_memsz ", p.memsz));
    segments_.push_back(p);
  }
  for (std::size_t i = 0; i < shnum; ++i) {  // Elf64_Shdr
    std::size_t at = shoff + i * shdr_bytes;
    section s;
    s.index = i;
    s.type = load_le<std::uint32_t>(bytes, at + 4);
    s.flags = load_le<std::uint64_t>(bytes, at + 8);
    s.addr = load_le<std::uint64_t>(bytes, at + 16);
    s.offset = load_le<std::uint64_t>(bytes, at + 24);
    s.size = load_le<std::uint64_t>(bytes, at + 32);
    s.link = load_le<std::uint32_t>(bytes, at + 40);
    s.info = load_le<std::uint32_t>(bytes, at + 44);
    s.addralign = load_le<std::uint64_t>(bytes, at + 48);
    s.entsize = load_le<std::uint64_t>(bytes, at + 56);
    if (s.type != sht_nobits && i != 0 && !fits(s.offset, s.size, bytes.size()))
      throw usage_error(str("code object: section ", i, " (offset ", s.offset, ", ", s.size,
                            " bytes) runs past the end of the file (", bytes.size(), " bytes); the file is truncated"));
    sections_.push_back(s);
  }
  if (shstrndx >= shn_loreserve || (shnum != 0 && shstrndx >= shnum))
    throw usage_error(str("code object: e_shstrndx ", shstrndx, " is not a section index (", shnum, " sections)"));
  if (shstrndx != shn_undef) {
    const section& names = sections_[shstrndx];
    for (section& s : sections_) s.name = string_at(names, load_le<std::uint32_t>(bytes, shoff + s.index * shdr_bytes),
                                                    "section name");
  }
}

std::span<const std::byte> file::contents(const section& s) const {
  if (s.type == sht_nobits || s.index == 0) return {};
  return bytes_.subspan(s.offset, s.size);  // checked in the constructor
}

std::span<const std::byte> file::contents(const segment& p) const {
  if (!fits(p.offset, p.filesz, bytes_.size()))
    throw usage_error(str("code object: a segment (offset ", p.offset, ", ", p.filesz,
                          " bytes) runs past the end of the file; the file is truncated"));
  return bytes_.subspan(p.offset, p.filesz);
}

std::string_view file::string_at(const section& strtab, std::uint64_t offset, std::string_view what) const {
  if (strtab.type != sht_strtab)
    throw usage_error(str("code object: ", what, " table (section ", strtab.index, ") is not SHT_STRTAB"));
  std::span<const std::byte> table = contents(strtab);
  if (offset >= table.size())
    throw usage_error(str("code object: ", what, " offset ", offset, " is outside its string table (section ",
                          strtab.index, ", ", table.size(), " bytes)"));
  auto* begin = reinterpret_cast<const char*>(table.data()) + offset;
  auto* end = reinterpret_cast<const char*>(table.data()) + table.size();
  const char* nul = std::find(begin, end, '\0');
  if (nul == end)
    throw usage_error(str("code object: ", what, " at offset ", offset, " of section ", strtab.index,
                          " has no terminating NUL"));
  return {begin, std::size_t(nul - begin)};
}

const section& file::linked_section(const section& s, std::string_view what) const {
  if (s.link == 0 || s.link >= sections_.size())
    throw usage_error(str("code object: section ", s.index, " '", s.name, "' links to section ", s.link,
                          ", which is not its ", what));
  return sections_[s.link];
}

std::vector<symbol> file::symbols(const section& symtab) const {
  if (symtab.entsize != sym_bytes || symtab.size % sym_bytes != 0)
    throw usage_error(str("code object: symbol table '", symtab.name, "' has entries of ", symtab.entsize,
                          " bytes and size ", symtab.size, "; Elf64_Sym is ", sym_bytes, " bytes"));
  const section& names = linked_section(symtab, "string table");
  std::span<const std::byte> raw = contents(symtab);
  std::vector<symbol> out;
  for (std::size_t at = 0; at < raw.size(); at += sym_bytes) {  // Elf64_Sym
    symbol sym;
    sym.name = string_at(names, load_le<std::uint32_t>(raw, at), "symbol name");
    sym.type = load_le<std::uint8_t>(raw, at + 4) & 0xF;
    sym.shndx = load_le<std::uint16_t>(raw, at + 6);
    sym.value = load_le<std::uint64_t>(raw, at + 8);
    sym.size = load_le<std::uint64_t>(raw, at + 16);
    out.push_back(sym);
  }
  return out;
}

std::vector<rela> file::relocations(const section& rela_section) const {
  if (rela_section.entsize != rela_bytes || rela_section.size % rela_bytes != 0)
    throw usage_error(str("code object: relocation section '", rela_section.name, "' has entries of ",
                          rela_section.entsize, " bytes and size ", rela_section.size, "; Elf64_Rela is ",
                          rela_bytes, " bytes"));
  std::span<const std::byte> raw = contents(rela_section);
  std::vector<rela> out;
  for (std::size_t at = 0; at < raw.size(); at += rela_bytes) {  // Elf64_Rela
    auto info = load_le<std::uint64_t>(raw, at + 8);
    out.push_back({load_le<std::uint64_t>(raw, at), std::uint32_t(info), std::uint32_t(info >> 32),
                   load_le<std::int64_t>(raw, at + 16)});
  }
  return out;
}

}  // namespace tg::amd::elf
