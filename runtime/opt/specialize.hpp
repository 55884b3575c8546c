// specialize.hpp: a kernel with its symbolic variables replaced by concrete values, folded
// again (constant loop bounds and strides let the heuristic tile and LLVM unroll). The
// device uses it for a binding it sees repeatedly; a binding that changes every call (a
// decode position) keeps the one generic kernel.
#pragma once
#include <cstdint>
#include <span>
#include <vector>
#include <tg/ast/node.hpp>

namespace tg::opt {

bool has_variables(std::span<const ast::node> nodes);
std::vector<ast::node> specialize(std::span<const ast::node> nodes, std::span<const std::int64_t> vars);

}  // namespace tg::opt
