// graph_arguments.hpp: the argument arrays of a captured graph's launches, laid out once, into
// which each replay writes its parameters. Every backend's graph starts from these, so a replay
// allocates nothing and looks nothing up.
//
//   tg::jit::graph_arguments args(capture);
//   args.apply(vars, buffers);                        // per replay
//   program->launch(args.buffers(i), args.vars(i));   // per launch
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include <tg/device/backend.hpp>

namespace tg::jit {

class graph_arguments {
 public:
  explicit graph_arguments(const graph_capture& c)
      : var_bindings_(c.var_bindings), buffer_bindings_(c.buffer_bindings), varies_(c.launches.size(), false) {
    for (const graph_launch& l : c.launches) {
      spans_.push_back({pointers_.size(), l.buffers.size(), values_.size(), l.vars.size()});
      pointers_.insert(pointers_.end(), l.buffers.begin(), l.buffers.end());
      values_.insert(values_.end(), l.vars.begin(), l.vars.end());
    }
    for (const graph_binding& b : var_bindings_) varies_[b.launch] = true;
  }

  void apply(std::span<const std::int64_t> vars, std::span<void* const> buffers) {
    for (const graph_binding& b : var_bindings_) values_[spans_[b.launch].var_at + b.slot] = vars[b.param] + b.offset;
    for (const graph_binding& b : buffer_bindings_) pointers_[spans_[b.launch].buffer_at + b.slot] = buffers[b.param];
  }

  std::size_t launch_count() const { return spans_.size(); }
  std::span<void* const> buffers(std::size_t launch) const {
    return std::span(pointers_).subspan(spans_[launch].buffer_at, spans_[launch].buffer_count);
  }
  std::span<const std::int64_t> vars(std::size_t launch) const {
    return std::span(values_).subspan(spans_[launch].var_at, spans_[launch].var_count);
  }
  // True when a variable of the launch is a parameter: what it computes from them may change.
  bool has_var_params(std::size_t launch) const { return varies_[launch]; }

 private:
  struct launch_span {
    std::size_t buffer_at, buffer_count, var_at, var_count;
  };
  std::vector<graph_binding> var_bindings_, buffer_bindings_;
  std::vector<launch_span> spans_;
  std::vector<void*> pointers_;
  std::vector<std::int64_t> values_;
  std::vector<bool> varies_;
};

}  // namespace tg::jit
