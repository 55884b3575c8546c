// launch_list.cpp: the generic graph every backend has unless it makes its own
// (backend::make_graph): the captured programs launched in turn from argument arrays prepared at
// capture, so a replay is the parameters written in and one virtual call per launch.
#include <tg/device/backend.hpp>

#include "runtime/jit/graph_arguments.hpp"

namespace tg {
namespace {

class launch_list final : public executable_graph {
 public:
  explicit launch_list(const graph_capture& c) : args_(c) {
    for (const graph_launch& l : c.launches) programs_.push_back(l.compiled);
  }

  void replay(std::span<const std::int64_t> vars, std::span<void* const> buffers) override {
    args_.apply(vars, buffers);
    for (std::size_t i = 0; i < programs_.size(); ++i) programs_[i]->launch(args_.buffers(i), args_.vars(i));
  }

 private:
  jit::graph_arguments args_;
  std::vector<std::shared_ptr<program>> programs_;
};

}  // namespace

std::unique_ptr<executable_graph> backend::make_graph(const graph_capture& capture) {
  return std::make_unique<launch_list>(capture);
}

}  // namespace tg
