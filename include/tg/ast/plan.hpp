// plan.hpp: what tg::lower returns: the kernels to run in order, each a slice of one node
// pool, the buffers they read and write, and the symbolic variables bound at launch.
#pragma once
#include <array>
#include <cstddef>
#include <span>
#include <tg/core/shape.hpp>
#include <tg/ast/node.hpp>

namespace tg {

inline constexpr int max_kernel_slots = 16;  // buffers one kernel may touch
inline constexpr int max_plan_vars = 8;

// A kernel: its nodes, how many of its ranges (the first ones) are output loops, and which
// plan buffer each of its slots is (slot 0 is what it stores to).
struct kernel_info {
  int first = 0, count = 0;
  int global_ranges = 0;
  int slot_count = 0;
  int slot_buffer[max_kernel_slots]{};
};

enum class buffer_role : std::uint8_t { input, intermediate, output };

struct buffer_info {
  buffer_role role = buffer_role::input;
  const char* name = nullptr;  // inputs only
  dtype dt = dtype::float32;
  shape_t shape{};
};

// A plan without its capacities in the type: what the runtime takes.
struct plan_view {
  std::span<const ast::node> nodes;
  std::span<const kernel_info> kernels;
  std::span<const buffer_info> buffers;
  std::span<const symbol> vars;
  int output = 0;

  std::span<const ast::node> kernel_nodes(int k) const {
    return nodes.subspan(std::size_t(kernels[k].first), std::size_t(kernels[k].count));
  }
};

template <std::size_t NodeCap, std::size_t KernelCap, std::size_t BufferCap>
struct plan {
  std::array<ast::node, NodeCap> nodes{};
  std::array<kernel_info, KernelCap> kernels{};
  std::array<buffer_info, BufferCap> buffers{};
  std::array<symbol, max_plan_vars> vars{};
  int node_count = 0, n_kernels = 0, n_buffers = 0, n_vars = 0;
  int output = 0;

  constexpr int kernel_count() const { return n_kernels; }
  constexpr int buffer_count() const { return n_buffers; }
  constexpr int var_count() const { return n_vars; }
  constexpr const kernel_info& kernel(int k) const { return kernels[std::size_t(k)]; }
  constexpr const ast::node& node_of(int k, int i) const { return nodes[std::size_t(kernels[std::size_t(k)].first + i)]; }
  // How many nodes of kernel k have op o (for compile-time checks of fusion).
  constexpr int count_ops(int k, ast::op o) const {
    int n = 0;
    for (int i = 0; i < kernels[std::size_t(k)].count; ++i) n += node_of(k, i).o == o;
    return n;
  }
  plan_view view() const {
    return {{nodes.data(), std::size_t(node_count)}, {kernels.data(), std::size_t(n_kernels)},
            {buffers.data(), std::size_t(n_buffers)}, {vars.data(), std::size_t(n_vars)}, output};
  }
};

}  // namespace tg
