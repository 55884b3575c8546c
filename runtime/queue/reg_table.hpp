// reg_table.hpp: register tables (name, offset, segment, fields) with encode and decode by field name.
//
// The data comes from scripts/gen_amd_regs.py (drivers/amd/regs/<ip>.hpp); this header holds the
// types and the lookups, so runtime/queue and drivers/amd share one shape without runtime/ including
// drivers/. Names keep the kernel's spelling: registers as in <ip>_offset.h ("regCP_HQD_ACTIVE"),
// fields as in <ip>_sh_mask.h ("ACTIVE" of CP_HQD_ACTIVE__ACTIVE_MASK).
//
//   using namespace tg::amd::regs;
//   constexpr std::uint32_t v = gc_11_0_0::table.encode("regCP_HQD_PQ_DOORBELL_CONTROL",
//                                                       {{"DOORBELL_OFFSET", 6}, {"DOORBELL_EN", 1}});
//   static_assert(v == 0x40000018);  // doorbell 3, as tinygrad's AM_GFX.setup_ring programs it
#pragma once
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::queue {

struct reg_field {
  std::string_view name;  // <reg>__<name>_MASK in <ip>_sh_mask.h
  std::uint32_t mask;     // in place (already shifted), as the _MASK define
  std::uint8_t shift;     // the __SHIFT define

  constexpr std::uint32_t max_value() const { return mask >> shift; }
  constexpr std::uint32_t get(std::uint32_t reg_value) const { return (reg_value & mask) >> shift; }
  // reg_value with this field replaced by v; v must fit the field.
  constexpr std::uint32_t set(std::uint32_t reg_value, std::uint32_t v) const {
    if (v > max_value())
      throw usage_error(str("register field ", name, ": value ", hex{v}, " does not fit its mask ",
                            hex{mask}, " (largest value ", hex{max_value()}, ")"));
    return (reg_value & ~mask) | (v << shift);
  }
};

struct reg_info {
  std::string_view name;      // "regCP_HQD_ACTIVE"
  std::uint32_t offset;       // dword offset from the IP base of segment `base_index`
  std::uint8_t base_index;    // the _BASE_IDX define: which IP base the offset is relative to
  std::uint16_t first_field;  // index into reg_table::fields
  std::uint16_t field_count;
};

struct field_value {
  std::string_view field;
  std::uint32_t value;
};

struct reg_table {
  std::string_view ip;               // "gc_11_0_0"
  std::span<const reg_info> regs;    // sorted by name
  std::span<const reg_field> fields;

  // The register called `name`, or nullptr.
  constexpr const reg_info* find(std::string_view name) const noexcept {
    std::size_t lo = 0, hi = regs.size();
    while (lo < hi) {
      std::size_t mid = lo + (hi - lo) / 2;
      if (regs[mid].name < name) lo = mid + 1;
      else hi = mid;
    }
    return lo < regs.size() && regs[lo].name == name ? &regs[lo] : nullptr;
  }

  // The register called `name`; a usage_error names the table when there is none.
  constexpr const reg_info& reg(std::string_view name) const {
    if (const reg_info* r = find(name)) return *r;
    throw usage_error(str(ip, ": no register ", name, " in the generated table (spelled as in ", ip,
                          "_offset.h, with the reg prefix? curated in scripts/gen_amd_regs.py?)"));
  }

  constexpr std::span<const reg_field> fields_of(const reg_info& r) const {
    return fields.subspan(r.first_field, r.field_count);
  }

  constexpr const reg_field* find_field(const reg_info& r, std::string_view name) const noexcept {
    for (const reg_field& f : fields_of(r))
      if (f.name == name) return &f;
    return nullptr;
  }

  constexpr const reg_field& field(const reg_info& r, std::string_view name) const {
    if (const reg_field* f = find_field(r, name)) return *f;
    throw usage_error(str(ip, ": register ", r.name, " has no field ", name));
  }

  // `old` with the named fields replaced: a read-modify-write value.
  constexpr std::uint32_t modify(std::string_view reg_name, std::uint32_t old,
                                 std::initializer_list<field_value> values) const {
    const reg_info& r = reg(reg_name);
    for (const field_value& v : values) old = field(r, v.field).set(old, v.value);
    return old;
  }

  // A full-register value with the named fields set and all others 0.
  constexpr std::uint32_t encode(std::string_view reg_name, std::initializer_list<field_value> values) const {
    return modify(reg_name, 0, values);
  }

  // One field of a register value.
  constexpr std::uint32_t decode(std::string_view reg_name, std::string_view field_name,
                                 std::uint32_t value) const {
    const reg_info& r = reg(reg_name);
    return field(r, field_name).get(value);
  }

  // The register at (base_index, offset), or nullptr. Aliases (two names, one offset) give the
  // alphabetically first name.
  constexpr const reg_info* find_at(std::uint8_t base_index, std::uint32_t offset) const noexcept {
    for (const reg_info& r : regs)
      if (r.base_index == base_index && r.offset == offset) return &r;
    return nullptr;
  }
};

// The checks a generated table must pass (its header static_asserts them): names sorted and
// unique, field ranges inside `fields`, every mask non-empty and starting at its shift.
constexpr bool is_well_formed(const reg_table& t) {
  for (std::size_t i = 0; i < t.regs.size(); ++i) {
    const reg_info& r = t.regs[i];
    if (i > 0 && !(t.regs[i - 1].name < r.name)) return false;
    if (std::size_t(r.first_field) + r.field_count > t.fields.size()) return false;
  }
  for (const reg_field& f : t.fields)
    if (f.shift > 31 || f.mask == 0 || ((f.mask >> f.shift) & 1u) == 0 || (f.mask & ((1ull << f.shift) - 1)) != 0)
      return false;
  return true;
}

// "regCP_HQD_ACTIVE = 0x00000001 {ACTIVE=1, BUSY_GATE=0}": the value with every field decoded.
std::string describe(const reg_table& table, const reg_info& reg, std::uint32_t value);

}  // namespace tg::queue
