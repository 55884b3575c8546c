// opts_text.cpp: kernel_opts to and from "upcast=a,b,c lanes=0|1[ panel=n][ group=g][ unroll=u][ nested=n]".
#include "runtime/tune/opts_text.hpp"

#include <array>
#include <charconv>
#include <vector>

namespace tg::tune {
namespace {

// A whole decimal number in lo..hi, else nullopt.
std::optional<int> number(std::string_view text, int lo, int hi) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < lo || value > hi) return std::nullopt;
  return value;
}

// The words between single spaces; an empty word (two spaces, a leading or trailing one) is kept
// and refused by the parser.
std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  for (;;) {
    const std::size_t space = text.find(' ');
    words.push_back(text.substr(0, space));
    if (space == std::string_view::npos) return words;
    text.remove_prefix(space + 1);
  }
}

// The optional settings after "lanes=", in the order to_text writes them, with their ranges: panels
// are a few thousand values at most, the GPU's group, unroll and nested lanes powers of two of a
// wave or so; anything outside is not ours.
struct setting {
  std::string_view key;
  int lo, hi;
  int codegen::kernel_opts::*field;
};
constexpr std::array<setting, 4> settings{{{"panel=", 1, 1 << 20, &codegen::kernel_opts::panel},
                                           {"group=", 1, 64, &codegen::kernel_opts::group_lanes},
                                           {"unroll=", 1, 64, &codegen::kernel_opts::reduce_unroll},
                                           {"nested=", 1, 64, &codegen::kernel_opts::nested_lanes}}};

}  // namespace

std::string to_text(const codegen::kernel_opts& opts) {
  std::string s = "upcast=";
  for (std::size_t i = 0; i < opts.upcast.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(opts.upcast[i]);
  }
  s += opts.vector_lanes ? " lanes=1" : " lanes=0";
  if (opts.panel > 0) s += " panel=" + std::to_string(opts.panel);
  // The GPU's settings where they are not the one-thread default (a CPU's opts never set them).
  for (const setting& k : settings)
    if (k.key != "panel=" && opts.*k.field != 1) s += " " + std::string(k.key) + std::to_string(opts.*k.field);
  return s;
}

std::optional<codegen::kernel_opts> parse_opts(std::string_view text) {
  constexpr std::string_view head = "upcast=";
  const std::vector<std::string_view> words = words_of(text);
  if (words.size() < 2 || !words[0].starts_with(head)) return std::nullopt;
  codegen::kernel_opts opts;
  if (words[1] != "lanes=1" && words[1] != "lanes=0") return std::nullopt;
  opts.vector_lanes = words[1] == "lanes=1";
  std::size_t next = 2;
  for (const setting& k : settings) {
    if (next == words.size() || !words[next].starts_with(k.key)) continue;
    auto value = number(words[next].substr(k.key.size()), k.lo, k.hi);
    if (!value) return std::nullopt;
    opts.*k.field = *value;
    ++next;
  }
  if (next != words.size()) return std::nullopt;
  std::string_view list = words[0].substr(head.size());
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    // Factors are small powers of two in practice; anything outside 1..1024 is not ours.
    auto factor = number(list.substr(0, comma), 1, 1024);
    if (!factor) return std::nullopt;
    opts.upcast.push_back(*factor);
    if (comma == std::string_view::npos) break;
    if (comma + 1 == list.size()) return std::nullopt;
    list.remove_prefix(comma + 1);
  }
  return opts;
}

}  // namespace tg::tune
