// graph.cpp: capturing launches into a graph and checking replays' arguments (see
// include/tg/graph.hpp); what a replay runs is the backend's (backend::make_graph).
#include <tg/graph.hpp>

#include <tg/core/error.hpp>
#include <tg/log.hpp>

namespace tg {

graph_builder::graph_builder(device& dev) : owner_(dev.shared_impl()), device_name_(dev.name()) {
  result_.owner_ = owner_;
}

std::string graph_builder::where() const {
  return str("graph_builder on ", device_name_, ", launch ", capture_.launches.size());
}

graph_var graph_builder::var(std::string name, std::int64_t initial) {
  result_.var_names_.push_back(std::move(name));
  initial_vars_.push_back(initial);
  return {result_.var_names_.size() - 1};
}

graph_buffer graph_builder::buffer(std::string name, tg::buffer initial) {
  if (!initial.data())
    throw usage_error(str("graph_builder on ", device_name_, ": buffer parameter '", name,
                          "' needs an initial buffer (allocate one on the device)"));
  if (initial.owner() != owner_.get())
    throw usage_error(str("graph_builder on ", device_name_, ": buffer parameter '", name,
                          "' was given a buffer of another device"));
  result_.buffer_names_.push_back(std::move(name));
  result_.buffers_.push_back(std::move(initial));
  return {result_.buffers_.size() - 1};
}

void graph_builder::add(const prepared_kernel& kernel, std::span<const graph_slot> buffers,
                        std::span<const graph_value> vars) {
  if (!kernel) throw usage_error(where() + ": the kernel is empty; make it with device::prepare");
  if (std::size_t(kernel.slot_count()) != buffers.size())
    throw usage_error(str(where(), ": the kernel uses ", kernel.slot_count(), " buffer slots, ", buffers.size(),
                          " buffers given"));
  const std::size_t launch = capture_.launches.size();
  graph_launch l{kernel.compiled(), {}, {}};
  for (std::size_t slot = 0; slot < buffers.size(); ++slot) {
    const graph_slot& b = buffers[slot];
    if (b.is_param) {
      if (b.param >= result_.buffers_.size())
        throw usage_error(str(where(), ", slot ", slot, ": buffer parameter ", b.param, " is not one of this builder's ",
                              result_.buffers_.size()));
      capture_.buffer_bindings.push_back({launch, slot, b.param, 0});
      l.buffers.push_back(result_.buffers_[b.param].data());
      continue;
    }
    if (!b.fixed.data()) throw usage_error(str(where(), ", slot ", slot, ": the buffer is empty"));
    if (b.fixed.owner() != owner_.get())
      throw usage_error(str(where(), ", slot ", slot, ": the buffer belongs to another device"));
    l.buffers.push_back(b.fixed.data());
    result_.captured_.push_back(b.fixed);
  }
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const graph_value& v = vars[i];
    if (!v.is_param) {
      l.vars.push_back(v.value);
      continue;
    }
    if (v.param >= initial_vars_.size())
      throw usage_error(str(where(), ", variable ", i, ": variable parameter ", v.param, " is not one of this builder's ",
                            initial_vars_.size()));
    capture_.var_bindings.push_back({launch, i, v.param, v.value});
    l.vars.push_back(initial_vars_[v.param] + v.value);
  }
  capture_.launches.push_back(std::move(l));
}

graph graph_builder::finish() {
  if (capture_.launches.empty()) throw usage_error(where() + ": finish of a graph with no launches (add some first)");
  capture_.var_params = initial_vars_.size();
  capture_.buffer_params = result_.buffers_.size();
  std::unique_ptr<executable_graph> exec = owner_->make_graph(capture_);
  graph g = std::move(result_);
  g.exec_ = std::move(exec);
  g.launches_ = capture_.launches.size();
  g.pointers_.resize(g.buffers_.size());
  if (debug_level() >= 1)
    log(log_level::debug, str("jit: graph on ", device_name_, ": ", g.launches_, " launches, ", g.var_names_.size(),
                              " variable and ", g.buffers_.size(), " buffer parameters"));
  capture_ = {};
  initial_vars_.clear();
  result_ = graph{};
  result_.owner_ = owner_;
  return g;
}

void graph::replay(std::span<const std::int64_t> vars, std::span<const graph_swap> swaps) {
  if (!exec_) throw usage_error("graph::replay: the graph is empty; make it with graph_builder::finish");
  if (vars.size() != var_names_.size()) {
    std::string names;
    for (const std::string& n : var_names_) names += (names.empty() ? "" : ", ") + n;
    throw usage_error(str("graph::replay: the graph has ", var_names_.size(), " variable parameters (", names, "); ",
                          vars.size(), " values given"));
  }
  for (std::size_t i = 0; i < buffers_.size(); ++i) pointers_[i] = buffers_[i].data();
  for (const graph_swap& s : swaps) {
    const std::size_t p = s.param.index;
    if (p >= buffers_.size())
      throw usage_error(str("graph::replay: swap of buffer parameter ", p, "; the graph has ", buffers_.size()));
    if (!s.with.data()) throw usage_error(str("graph::replay: buffer parameter '", buffer_names_[p], "': the swap's buffer is empty"));
    if (s.with.owner() != owner_.get())
      throw usage_error(str("graph::replay: buffer parameter '", buffer_names_[p],
                            "': the swap's buffer belongs to another device"));
    if (s.with.size_bytes() != buffers_[p].size_bytes())
      throw usage_error(str("graph::replay: buffer parameter '", buffer_names_[p], "' is ", buffers_[p].size_bytes(),
                            " bytes; the swap's buffer is ", s.with.size_bytes(), " (swap buffers of the same size)"));
    pointers_[p] = s.with.data();
  }
  exec_->replay(vars, pointers_);
}

}  // namespace tg
