// opts_text.cpp: kernel_opts to and from "upcast=a,b,c lanes=0|1[ panel=n]".
#include "runtime/tune/opts_text.hpp"

#include <charconv>

namespace tg::tune {
namespace {

// A whole decimal number in lo..hi, else nullopt.
std::optional<int> number(std::string_view text, int lo, int hi) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < lo || value > hi) return std::nullopt;
  return value;
}

}  // namespace

std::string to_text(const codegen::kernel_opts& opts) {
  std::string s = "upcast=";
  for (std::size_t i = 0; i < opts.upcast.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(opts.upcast[i]);
  }
  s += opts.vector_lanes ? " lanes=1" : " lanes=0";
  if (opts.panel > 0) s += " panel=" + std::to_string(opts.panel);
  return s;
}

std::optional<codegen::kernel_opts> parse_opts(std::string_view text) {
  constexpr std::string_view head = "upcast=", lanes_on = " lanes=1", lanes_off = " lanes=0", panel = " panel=";
  if (!text.starts_with(head)) return std::nullopt;
  codegen::kernel_opts opts;
  if (std::size_t at = text.find(panel); at != std::string_view::npos) {
    // Panels are a few thousand values at most; anything outside 1..1 << 20 is not ours.
    auto value = number(text.substr(at + panel.size()), 1, 1 << 20);
    if (!value) return std::nullopt;
    opts.panel = *value;
    text = text.substr(0, at);
  }
  if (text.size() < head.size() + lanes_on.size()) return std::nullopt;
  std::string_view tail = text.substr(text.size() - lanes_on.size());
  if (tail != lanes_on && tail != lanes_off) return std::nullopt;
  opts.vector_lanes = tail == lanes_on;
  std::string_view list = text.substr(head.size(), text.size() - head.size() - lanes_on.size());
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
