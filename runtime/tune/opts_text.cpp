// opts_text.cpp: kernel_opts to and from "upcast=a,b,c lanes=0|1".
#include "runtime/tune/opts_text.hpp"

#include <charconv>

namespace tg::tune {

std::string to_text(const codegen::kernel_opts& opts) {
  std::string s = "upcast=";
  for (std::size_t i = 0; i < opts.upcast.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(opts.upcast[i]);
  }
  return s + (opts.vector_lanes ? " lanes=1" : " lanes=0");
}

std::optional<codegen::kernel_opts> parse_opts(std::string_view text) {
  constexpr std::string_view head = "upcast=", lanes_on = " lanes=1", lanes_off = " lanes=0";
  if (!text.starts_with(head) || text.size() < head.size() + lanes_on.size()) return std::nullopt;
  codegen::kernel_opts opts;
  std::string_view tail = text.substr(text.size() - lanes_on.size());
  if (tail != lanes_on && tail != lanes_off) return std::nullopt;
  opts.vector_lanes = tail == lanes_on;
  std::string_view list = text.substr(head.size(), text.size() - head.size() - lanes_on.size());
  while (!list.empty()) {
    int factor = 0;
    auto [end, error] = std::from_chars(list.data(), list.data() + list.size(), factor);
    // Factors are small powers of two in practice; anything outside 1..1024 is not ours.
    if (error != std::errc() || factor < 1 || factor > 1024) return std::nullopt;
    opts.upcast.push_back(factor);
    list.remove_prefix(std::size_t(end - list.data()));
    if (list.empty()) break;
    if (list[0] != ',' || list.size() == 1) return std::nullopt;
    list.remove_prefix(1);
  }
  return opts;
}

}  // namespace tg::tune
