// access_strides.hpp: how far a kernel's memory accesses move when one loop range steps by 1,
// read off its index expressions (ast::eval_index with the other ranges at 0). The heuristics
// (CPU and GPU) shape loops from these: a range along which accesses are contiguous is the one
// to put in vector lanes or in neighbouring threads.
#pragma once
#include <cstdint>
#include <span>
#include <tg/ast/node.hpp>

namespace tg::opt {

// The range node numbered `number`, or null.
const ast::node* range_node(std::span<const ast::node> nodes, int number);
// Range `number`'s bound when it is a constant, else -1 (symbolic).
std::int64_t const_bound(std::span<const ast::node> nodes, int number);

// Elements that access `n` (a load or store) moves by as range `number` steps by 1; variables
// at a typical value, a loaded value (a gather's index) as 0.
std::int64_t element_stride(std::span<const ast::node> nodes, const ast::node& n, int number);

// True when every load and store moves by 0 or 1 element as range `number` steps (so lanes
// along it are one vector access), with at least one access moving by 1.
bool is_unit_stride(std::span<const ast::node> nodes, int number);

}  // namespace tg::opt
