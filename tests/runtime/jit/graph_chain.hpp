// graph_chain.hpp: the graph the graph tests replay on every device: four chained kernels built
// with tg::kernel_builder, each reading what the one before wrote, with a variable parameter in
// the kernargs, one in the grid, and a buffer parameter; and the host reference they must equal.
//   y = x * 2;  z = y + v;  s = sum(z);  w[i] = z[i] + s for i < rows (the rest untouched)
#pragma once
#include <cstdint>
#include <new>
#include <vector>

#include <tg/device.hpp>
#include <tg/graph.hpp>

namespace tg::test {

inline constexpr std::int64_t chain_n = 300;  // more than one 256-lane workgroup, the last partial

inline ast::kernel scale_kernel() {  // slot 0 = slot 1 * 2
  kernel_builder kb;
  auto i = kb.output_range(chain_n);
  kb.store(0, i, kb.load<float>(1, i) * 2.0);
  return kb.finish();
}
inline ast::kernel shift_kernel() {  // slot 0 = slot 1 + variable 0
  kernel_builder kb;
  auto i = kb.output_range(chain_n);
  kb.store(0, i, kb.load<float>(1, i) + kb.cast(dtype::float32, kb.variable(0)));
  return kb.finish();
}
inline ast::kernel sum_kernel() {  // slot 0[0] = sum of slot 1
  kernel_builder kb;
  auto o = kb.output_range(1);
  auto k = kb.reduce_range(chain_n);
  kb.store(0, o, kb.sum(kb.load<float>(1, k), k));
  return kb.finish();
}
inline ast::kernel head_kernel() {  // slot 0[i] = slot 1[i] + slot 2[0] for i < variable 0
  kernel_builder kb;
  auto i = kb.output_range(kb.variable(0));
  kb.store(0, i, kb.load<float>(1, i) + kb.load<float>(2, kb.index(0)));
  return kb.finish();
}

// Multiples of 1/8 up to 1: every sum below is exact in float, whatever the order.
inline std::vector<float> chain_input(int seed) {
  std::vector<float> v(chain_n);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(int((i * 5 + std::size_t(seed) * 3) % 17) - 8) / 8.0f;
  return v;
}

// w as the host computes it, from x, v and rows; `old` is w before.
inline std::vector<float> chain_reference(const std::vector<float>& x, std::int64_t v, std::int64_t rows,
                                          std::vector<float> old) {
  std::vector<float> z(x.size());
  float s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += z[i] = x[i] * 2 + float(v);
  for (std::int64_t i = 0; i < rows; ++i) old[std::size_t(i)] = z[std::size_t(i)] + s;
  return old;
}

struct chain {
  explicit chain(device& d)
      : dev(d), scale(d.prepare(scale_kernel())), shift(d.prepare(shift_kernel())), sum(d.prepare(sum_kernel())),
        head(d.prepare(head_kernel())), x0(d.allocate(4 * chain_n)), x1(d.allocate(4 * chain_n)),
        y(d.allocate(4 * chain_n)), z(d.allocate(4 * chain_n)), s(d.allocate(4)), w(d.allocate(4 * chain_n)) {
    x0.copy_in(chain_input(1).data(), 4 * chain_n);
    x1.copy_in(chain_input(2).data(), 4 * chain_n);
    clear_w();
  }

  // Parameters: v (variable 0), rows (variable 1), x (buffer 0, x0 unless swapped).
  graph capture() {
    graph_builder g(dev);
    const graph_var v = g.var("v", 0), rows = g.var("rows", chain_n);
    const graph_buffer x = g.buffer("x", x0);
    x_param = x;
    g.add(scale, {y, x});
    g.add(shift, {z, y}, {v});
    g.add(sum, {s, z});
    g.add(head, {w, z, s}, {rows});
    return g.finish();
  }
  // The same launches, one by one.
  void launch_directly(const buffer& x, std::int64_t v, std::int64_t rows) {
    scale.launch(std::vector<buffer>{y, x});
    shift.launch(std::vector<buffer>{z, y}, std::vector<std::int64_t>{v});
    sum.launch(std::vector<buffer>{s, z});
    head.launch(std::vector<buffer>{w, z, s}, std::vector<std::int64_t>{rows});
  }
  std::vector<float> read_w() const {
    std::vector<float> out(chain_n);
    w.copy_out(out.data(), 4 * chain_n);
    return out;
  }
  void clear_w() {
    const std::vector<float> fill(chain_n, -100.0f);
    w.copy_in(fill.data(), 4 * chain_n);
  }

  device& dev;
  prepared_kernel scale, shift, sum, head;
  buffer x0, x1, y, z, s, w;
  graph_buffer x_param;
};

// Heap allocations made by this thread (counted by the test binary's operator new): a replay
// must make none.
inline thread_local std::uint64_t thread_allocations = 0;

}  // namespace tg::test
