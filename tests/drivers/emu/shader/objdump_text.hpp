// objdump_text.hpp: llvm-objdump-19 -d output parsed into instructions and operand fields (register
// kind and first index, inline-constant code, literal value, named modifiers), so the golden test
// compares fields rather than text.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tg::emu::test {

struct text_instruction {
  std::uint64_t address = 0;
  std::vector<std::uint32_t> words;
  std::string mnemonic;                   // without _e32 / _e64 / _dpp suffixes; VOPD "x :: y"
  std::string full_mnemonic;              // as printed
  std::vector<std::string> operands;      // VOPD: X's, then "::", then Y's
  std::map<std::string, std::string> modifiers;  // "offset" -> "0x10", "row_shr" -> "1", "clamp" -> ""
  std::string line;
};

inline std::string strip_suffix(std::string m) {
  for (const char* s : {"_e64_dpp", "_e32", "_e64", "_dpp"}) {
    const std::string suf = s;
    if (m.size() > suf.size() && m.compare(m.size() - suf.size(), suf.size(), suf) == 0) return m.substr(0, m.size() - suf.size());
  }
  return m;
}

inline std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// "v2, v0, v0 row_shr:1 bound_ctrl:1" -> operands {"v2","v0","v0"}, modifiers {row_shr: 1, bound_ctrl: 1}.
inline void split_operands(const std::string& text, std::vector<std::string>& ops, std::map<std::string, std::string>& mods) {
  std::string cur;
  int depth = 0;
  std::vector<std::string> parts;
  for (char ch : text) {
    if (ch == '(' || ch == '[') ++depth;
    if (ch == ')' || ch == ']') --depth;
    if (ch == ',' && depth == 0) { parts.push_back(trim(cur)); cur.clear(); continue; }
    cur += ch;
  }
  if (!trim(cur).empty()) parts.push_back(trim(cur));
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::istringstream words(parts[i]);
    std::string w;
    bool first = true;
    while (words >> w) {
      const auto colon = w.find(':');
      const bool is_mod = (colon != std::string::npos && w[0] != 'v' && w[0] != 's' && w[0] != 't') ||
                          w == "clamp" || w == "glc" || w == "slc" || w == "dlc" || w == "fi" || w == "offen" ||
                          (colon != std::string::npos && w.rfind("v[", 0) != 0 && w.rfind("s[", 0) != 0 && w.rfind("ttmp[", 0) != 0);
      if (first && !is_mod) { ops.push_back(w); first = false; continue; }
      first = false;
      if (colon != std::string::npos) mods[w.substr(0, colon)] = w.substr(colon + 1);
      else mods[w] = "";
    }
  }
}

inline std::vector<text_instruction> parse_objdump(const std::string& text) {
  std::vector<text_instruction> out;
  static const std::regex line_re(R"(^\s+(\S+)(.*?)\s*//\s*([0-9A-Fa-f]+):((?:\s+[0-9A-F]{8})+))");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, line_re)) continue;
    text_instruction t;
    t.line = line;
    t.full_mnemonic = m[1];
    t.address = std::strtoull(m[3].str().c_str(), nullptr, 16);
    std::istringstream ws(m[4].str());
    for (std::string w; ws >> w;) t.words.push_back(std::uint32_t(std::strtoul(w.c_str(), nullptr, 16)));
    std::string rest = m[2];
    const auto vopd = rest.find("::");
    if (vopd != std::string::npos) {
      std::string y = trim(rest.substr(vopd + 2));
      const auto sp = y.find(' ');
      const std::string ymn = y.substr(0, sp);
      t.mnemonic = t.full_mnemonic + " :: " + ymn;
      split_operands(rest.substr(0, vopd), t.operands, t.modifiers);
      t.operands.push_back("::");
      split_operands(sp == std::string::npos ? "" : y.substr(sp), t.operands, t.modifiers);
    } else {
      t.mnemonic = strip_suffix(t.full_mnemonic);
      split_operands(rest, t.operands, t.modifiers);
    }
    out.push_back(std::move(t));
  }
  return out;
}

// An operand's 9-bit source code (VGPRs as 256 + n), with the literal value for code 255.
struct operand_code {
  unsigned code = 0;
  std::uint32_t literal = 0;
  bool ok = false;
};

inline operand_code parse_operand(std::string s) {
  operand_code r;
  while (!s.empty() && (s[0] == '-' || s[0] == '|') && s.size() > 1 && !std::isdigit(static_cast<unsigned char>(s[1])))
    s = s.substr(1);
  if (!s.empty() && s.back() == '|') s.pop_back();
  for (const char* f : {"neg(", "abs(", "sext("})
    if (s.rfind(f, 0) == 0 && s.back() == ')') s = s.substr(std::string(f).size(), s.size() - std::string(f).size() - 1);
  static const std::map<std::string, unsigned> named = {
      {"vcc_lo", 106}, {"vcc", 106}, {"vcc_hi", 107}, {"null", 124}, {"off", 124}, {"m0", 125}, {"exec_lo", 126},
      {"exec", 126}, {"exec_hi", 127}, {"scc", 253}, {"src_scc", 253}, {"src_shared_base", 235},
      {"src_shared_limit", 236}, {"src_private_base", 237}, {"src_private_limit", 238},
      {"0.5", 240}, {"-0.5", 241}, {"1.0", 242}, {"-1.0", 243}, {"2.0", 244}, {"-2.0", 245}, {"4.0", 246},
      {"-4.0", 247}, {"0.15915494", 248}, {"0.15915494309189532", 248}};
  if (auto it = named.find(s); it != named.end()) { r.code = it->second; r.ok = true; return r; }
  std::smatch m;
  static const std::regex reg(R"(^(v|s|ttmp)(?:(\d+)|\[(\d+):\d+\])(?:\.[lh])?$)");
  if (std::regex_match(s, m, reg)) {
    const unsigned n = unsigned(std::stoul(m[2].matched ? m[2].str() : m[3].str()));
    r.code = m[1] == "v" ? 256 + n : m[1] == "s" ? n : 108 + n;
    r.ok = true;
    return r;
  }
  if (s.rfind("0x", 0) == 0) { r.code = 255; r.literal = std::uint32_t(std::stoull(s, nullptr, 16)); r.ok = true; return r; }
  static const std::regex dec(R"(^-?\d+$)");
  if (std::regex_match(s, dec)) {
    const long v = std::stol(s);
    if (v >= 0 && v <= 64) { r.code = unsigned(128 + v); r.ok = true; }
    else if (v >= -16 && v < 0) { r.code = unsigned(192 - v); r.ok = true; }
    else { r.code = 255; r.literal = std::uint32_t(v); r.ok = true; }
  }
  return r;
}

inline std::optional<long long> parse_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 0);
  if (*end != 0) return std::nullopt;
  return v;
}

}  // namespace tg::emu::test
