// print.hpp: a kernel AST as readable text, one node per line (for TG_DEBUG and tests).
#pragma once
#include <span>
#include <sstream>
#include <string>
#include <tg/ast/node.hpp>

namespace tg::ast {

inline std::string to_string(std::span<const node> nodes) {
  std::ostringstream out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const node& n = nodes[i];
    out << "  %" << i << " = " << name(n.o) << '.' << tg::name(n.dt);
    for (auto s : n.src)
      if (s != none) out << " %" << s;
    switch (n.o) {
      case op::constant: out << " " << (is_float(n.dt) ? n.value : double(n.arg)); break;
      case op::variable: out << " var" << n.arg; break;
      case op::range: out << " r" << n.arg; break;
      case op::load: case op::store: case op::prefetch: out << " buf" << n.arg; break;
      default: break;
    }
    out << '\n';
  }
  return out.str();
}

}  // namespace tg::ast
