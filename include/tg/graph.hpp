// graph.hpp: captured launch sequences (runtime/jit): prepared kernels launched on one device
// with their buffers and variables, replayed with new variable values and, where asked, other
// buffers of the same sizes. A replay does no lookup, compilation or allocation; on AMD it is one
// submission (drivers/amd/am_graph.cpp).
//
//   tg::graph_builder g(dev);
//   tg::graph_var pos = g.var("pos");                  // a value given at each replay
//   tg::graph_buffer x = g.buffer("x", x0);            // x0 unless a replay swaps it
//   g.add(scale, {y, x});                              // y = x * 2
//   g.add(shift, {z, y}, {pos, pos + 1});              // variables: pos and pos + 1
//   tg::graph step = g.finish();
//   step.replay({7});                                  // pos = 7, x = x0
//   step.replay({8}, {{x, x1}});                       // pos = 8, x = x1 for this replay
//
// Like launches, a replay may return before the device is done (copy_out and synchronize wait).
// A graph keeps its captured buffers and programs alive.
#pragma once
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <tg/device.hpp>

namespace tg {

// A variable parameter of a graph (graph_builder::var), in declaration order.
struct graph_var {
  std::size_t index = 0;
};
// A buffer parameter of a graph (graph_builder::buffer), in declaration order.
struct graph_buffer {
  std::size_t index = 0;
};

// A launch's variable: a value fixed at capture, or a parameter plus a constant.
struct graph_value {
  template <std::integral T>
  graph_value(T v) : value(std::int64_t(v)) {}
  graph_value(graph_var p) : param(p.index), is_param(true) {}
  std::int64_t value = 0;  // the constant, or the offset added to the parameter
  std::size_t param = 0;
  bool is_param = false;
};
inline graph_value operator+(graph_var p, std::int64_t offset) {
  graph_value v(p);
  v.value = offset;
  return v;
}
inline graph_value operator-(graph_var p, std::int64_t offset) { return p + -offset; }

// A launch's buffer: one fixed at capture, or a buffer parameter.
struct graph_slot {
  graph_slot(buffer b) : fixed(std::move(b)) {}
  graph_slot(graph_buffer p) : param(p.index), is_param(true) {}
  buffer fixed;
  std::size_t param = 0;
  bool is_param = false;
};

// For one replay, buffer parameter `param` is `with` (the same size, on the same device).
struct graph_swap {
  graph_buffer param;
  buffer with;
};

class graph {
 public:
  graph() = default;
  explicit operator bool() const { return exec_ != nullptr; }
  std::size_t launch_count() const { return launches_; }
  std::size_t var_count() const { return var_names_.size(); }
  std::size_t buffer_count() const { return buffers_.size(); }

  // One value per variable parameter, in declaration order; swaps name buffer parameters, the
  // rest keep the buffer given at capture. usage_error for a wrong count, a swapped buffer of
  // another size or device, or an unknown parameter.
  void replay(std::span<const std::int64_t> vars, std::span<const graph_swap> swaps = {});
  void replay(std::initializer_list<std::int64_t> vars, std::initializer_list<graph_swap> swaps = {}) {
    replay(std::span(vars.begin(), vars.size()), std::span(swaps.begin(), swaps.size()));
  }

 private:
  friend class graph_builder;
  std::shared_ptr<backend> owner_;          // first: outlives the programs the executable holds
  std::vector<buffer> captured_;            // every buffer the launches use, kept alive
  std::vector<buffer> buffers_;             // each buffer parameter's capture-time buffer
  std::vector<std::string> var_names_, buffer_names_;
  std::vector<void*> pointers_;             // replay's buffer parameters, reused
  std::size_t launches_ = 0;
  std::unique_ptr<executable_graph> exec_;
};

class graph_builder {
 public:
  explicit graph_builder(device& dev);

  // A variable parameter; `initial` is its value while capturing (a backend may size buffers or
  // grids from it; replays give their own).
  graph_var var(std::string name, std::int64_t initial = 0);
  // A buffer parameter: `initial` unless a replay swaps it.
  graph_buffer buffer(std::string name, tg::buffer initial);

  // Captures one launch: a buffer per slot of the kernel, and its variables. usage_error for a
  // wrong slot count, an empty kernel or buffer, a buffer of another device, or a parameter
  // this builder did not make.
  void add(const prepared_kernel& kernel, std::span<const graph_slot> buffers, std::span<const graph_value> vars = {});
  void add(const prepared_kernel& kernel, std::initializer_list<graph_slot> buffers,
           std::initializer_list<graph_value> vars = {}) {
    add(kernel, std::span(buffers.begin(), buffers.size()), std::span(vars.begin(), vars.size()));
  }

  // The executable graph, made by the device's backend; the builder is empty afterwards.
  graph finish();

 private:
  std::string where() const;  // "graph_builder on CPU, launch 3"

  std::shared_ptr<backend> owner_;
  std::string device_name_;
  graph_capture capture_;
  std::vector<std::int64_t> initial_vars_;
  graph result_;
};

}  // namespace tg
