// ast_hash.hpp: what a tuning-cache entry is keyed by: a kernel's AST hash, the target it was
// tuned on and the version of the opts' text form, so an entry is only served where it was found.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <tg/ast/hash.hpp>

namespace tg::tune {

// The hash of a kernel: every node's op, dtype, sources, argument and float value (ast::hash,
// plain FNV over fixed-width fields, so the same on every run and in every process), plus how
// many of its ranges are output loops. The author's loop shape is left out: it is what gets tuned.
constexpr std::uint64_t ast_hash(std::span<const ast::node> nodes, int global_ranges) {
  return ast::hash(nodes, fnv_mix(fnv_offset, std::uint64_t(std::uint32_t(global_ranges))));
}

// Bumped whenever the meaning of the opts' text form (opts_text.hpp) or of a loop shape changes:
// an entry from an older tg is then never read.
inline constexpr int opts_format_version = 2;  // 2: panels (kernel_opts::panel)

struct tuning_key {
  std::uint64_t ast = 0;
  std::string target;  // "CPU avx512 znver4 f=..." or "gfx1100", "gfx1100:emu": where it was timed
  int version = opts_format_version;
  bool operator==(const tuning_key&) const = default;
};

}  // namespace tg::tune
