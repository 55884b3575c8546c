// pci_text.cpp: sysfs text parsing for the PCI transport (see pci_text.hpp).
#include "runtime/transport/pci/pci_text.hpp"

#include <charconv>
#include <ios>

namespace tg::transport::pci {

namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::uint64_t> parse_hex(std::string_view text) {
  text = trim(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (err != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::vector<bar_region>> parse_resource(std::string_view text) {
  std::vector<bar_region> bars;
  while (!trim(text).empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = trim(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    std::uint64_t v[3];
    for (std::uint64_t& field : v) {
      const std::size_t gap = line.find(' ');
      std::optional<std::uint64_t> n = parse_hex(line.substr(0, gap));
      if (!n) return std::nullopt;
      field = *n;
      line = gap == std::string_view::npos ? std::string_view{} : trim(line.substr(gap));
    }
    if (!line.empty()) return std::nullopt;
    bar_region r;
    if (v[1] != 0) {  // the kernel prints start, end (inclusive) and flags; zeros when not implemented
      r.bus_address = v[0];
      r.size = v[1] - v[0] + 1;
      r.is_64bit = v[2] & ioresource_mem_64;
      r.prefetchable = v[2] & ioresource_prefetch;
    }
    bars.push_back(r);
  }
  return bars;
}

}  // namespace tg::transport::pci
