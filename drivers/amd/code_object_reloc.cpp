// code_object_reloc.cpp: computes and writes R_AMDGPU_* relocation values.
#include "drivers/amd/code_object_reloc.hpp"

#include <limits>

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

#include "drivers/amd/elf_reader.hpp"

namespace tg::amd {
namespace {

struct reloc_info {
  std::uint32_t type;
  std::string_view name;
  std::size_t width;  // 0: not applied by tg
};
constexpr reloc_info relocs[] = {
    {r_amdgpu::none, "R_AMDGPU_NONE", 0},           {r_amdgpu::abs32_lo, "R_AMDGPU_ABS32_LO", 4},
    {r_amdgpu::abs32_hi, "R_AMDGPU_ABS32_HI", 4},   {r_amdgpu::abs64, "R_AMDGPU_ABS64", 8},
    {r_amdgpu::rel32, "R_AMDGPU_REL32", 4},         {r_amdgpu::rel64, "R_AMDGPU_REL64", 8},
    {r_amdgpu::abs32, "R_AMDGPU_ABS32", 4},         {r_amdgpu::gotpcrel, "R_AMDGPU_GOTPCREL", 0},
    {r_amdgpu::gotpcrel32_lo, "R_AMDGPU_GOTPCREL32_LO", 0},
    {r_amdgpu::gotpcrel32_hi, "R_AMDGPU_GOTPCREL32_HI", 0},
    {r_amdgpu::rel32_lo, "R_AMDGPU_REL32_LO", 4},   {r_amdgpu::rel32_hi, "R_AMDGPU_REL32_HI", 4},
    {r_amdgpu::relative64, "R_AMDGPU_RELATIVE64", 8}, {r_amdgpu::rel16, "R_AMDGPU_REL16", 0},
};

const reloc_info* find(std::uint32_t type) {
  for (const reloc_info& r : relocs)
    if (r.type == type) return &r;
  return nullptr;
}

}  // namespace

std::string_view reloc_name(std::uint32_t type) {
  const reloc_info* r = find(type);
  return r ? r->name : std::string_view{};
}

std::size_t reloc_width(std::uint32_t type, std::string_view where) {
  const reloc_info* r = find(type);
  if (r == nullptr)
    throw usage_error(str("code object: ", where, ": unknown AMDGPU relocation type ", type,
                          " (not in LLVM 19 ELFRelocs/AMDGPU.def)"));
  if (r->width == 0 && type != r_amdgpu::none) {
    bool got = type == r_amdgpu::gotpcrel || type == r_amdgpu::gotpcrel32_lo || type == r_amdgpu::gotpcrel32_hi;
    throw usage_error(str("code object: ", where, ": relocation ", r->name, " is not supported",
                          got ? " (it needs a GOT; link the object with ld.lld -shared, which builds one)"
                              : " (tg applies ABS32/ABS64/REL32/REL64/RELATIVE64 and their LO/HI halves)"));
  }
  return r->width;
}

void apply_fixups(std::span<std::byte> image, std::span<const fixup> fixups, std::uint64_t load_address) {
  for (const fixup& f : fixups) {
    // Unsigned arithmetic wraps exactly like the 64-bit two's-complement sums the ABI specifies.
    std::uint64_t s = f.symbol_is_absolute ? f.symbol : load_address + f.symbol;
    std::uint64_t p = load_address + f.at;
    std::uint64_t sa = s + std::uint64_t(f.addend);
    std::uint64_t pcrel = sa - p;
    auto put32 = [&](std::uint64_t v) { elf::store_le(image, f.at, std::uint32_t(v)); };
    auto overflow = [&](std::uint64_t v) {
      return usage_error(str("code object: ", reloc_name(f.type), " at image offset ", hex{f.at},
                             ": value ", hex{v}, " does not fit 32 bits (load address ", hex{load_address}, ")"));
    };
    switch (f.type) {
      case r_amdgpu::none: break;
      case r_amdgpu::abs32_lo: put32(sa); break;
      case r_amdgpu::abs32_hi: put32(sa >> 32); break;
      case r_amdgpu::abs64: elf::store_le(image, f.at, sa); break;
      case r_amdgpu::abs32:
        if (sa > std::numeric_limits<std::uint32_t>::max()) throw overflow(sa);
        put32(sa);
        break;
      case r_amdgpu::rel32: {
        auto v = std::int64_t(pcrel);
        if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
          throw overflow(pcrel);
        put32(pcrel);
        break;
      }
      case r_amdgpu::rel64: elf::store_le(image, f.at, pcrel); break;
      case r_amdgpu::rel32_lo: put32(pcrel); break;
      case r_amdgpu::rel32_hi: put32(pcrel >> 32); break;
      case r_amdgpu::relative64: elf::store_le(image, f.at, load_address + std::uint64_t(f.addend)); break;
      default: TG_UNREACHABLE("fixup of a relocation type reloc_width rejects");
    }
  }
}

}  // namespace tg::amd
