// nv_graph.cpp: a captured graph on NV as a CUDA graph (nv_backend::make_graph): one kernel node
// per launch, chained in capture order, instantiated once; a replay writes its parameters into the
// argument arrays (jit::graph_arguments), updates the nodes whose arguments they reach
// (cuGraphExecKernelNodeSetParams: their parameters and, as the variables change, their grids),
// and launches the whole graph with one cuGraphLaunch. The GPU then runs the step's kernels
// without the host's launch of each, and with less of the gap a stream leaves between kernels.
//
// The default since measured on an H200 (8B-shaped models, decode: Q8_0 154.8 -> 165.1 tok/s,
// Q4_K_M 151.3 -> 154.7, in the same run of scripts/device-check.sh). With TG_NV_GRAPHS=0, and
// where the driver has no graph entry points or a launch is not an NV kernel, a graph replays as
// the launch list every backend has (runtime/jit/launch_list.cpp), as it does when a launch has an
// empty output at capture (a kernel node cannot have no blocks). A replay whose variables leave
// some launch with no blocks launches that replay's kernels one by one.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <tg/core/error.hpp>
#include <vector>

#include "drivers/nv/nv_backend.hpp"
#include "drivers/nv/nv_program.hpp"
#include "runtime/jit/graph_arguments.hpp"

namespace tg::nv {

namespace {

bool graphs_asked() {
  const char* v = std::getenv("TG_NV_GRAPHS");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

class nv_graph final : public executable_graph {
 public:
  nv_graph(nv_backend& owner, const graph_capture& c, std::vector<std::shared_ptr<nv_program>> programs)
      : owner_(owner), cu_(owner.driver()), args_(c), programs_(std::move(programs)), args_of_(programs_.size()),
        nodes_(programs_.size()), bound_(programs_.size(), false) {
    for (const graph_binding& b : c.var_bindings) bound_[b.launch] = true;
    for (const graph_binding& b : c.buffer_bindings) bound_[b.launch] = true;
    owner_.make_current();
    check(cu_, cu_.cuGraphCreate(&graph_, 0), "cuGraphCreate");
    try {
      for (std::size_t i = 0; i < programs_.size(); ++i) {
        cuda_kernel_node_params p{};
        if (!node_params(i, p)) TG_UNREACHABLE("nv_graph: a launch empty at capture (make_graph keeps those as a launch list)");
        const CUgraphNode before = i == 0 ? nullptr : nodes_[i - 1];
        check(cu_, cu_.cuGraphAddKernelNode(&nodes_[i], graph_, i == 0 ? nullptr : &before, i == 0 ? 0 : 1, &p),
              "cuGraphAddKernelNode");
      }
      check(cu_, cu_.cuGraphInstantiateWithFlags(&exec_, graph_, 0), "cuGraphInstantiateWithFlags");
    } catch (...) {
      cu_.cuGraphDestroy(graph_);
      throw;
    }
  }
  ~nv_graph() override {
    cu_.cuCtxSetCurrent(owner_.context());
    if (exec_) cu_.cuGraphExecDestroy(exec_);
    cu_.cuGraphDestroy(graph_);
  }

  void replay(std::span<const std::int64_t> vars, std::span<void* const> buffers) override {
    args_.apply(vars, buffers);
    owner_.make_current();
    for (std::size_t i = 0; i < programs_.size(); ++i) {
      if (!bound_[i]) continue;
      cuda_kernel_node_params p{};
      if (!node_params(i, p)) {  // an empty output this time: no node can say so
        for (std::size_t j = 0; j < programs_.size(); ++j) programs_[j]->launch(args_.buffers(j), args_.vars(j));
        return;
      }
      check(cu_, cu_.cuGraphExecKernelNodeSetParams(exec_, nodes_[i], &p), "cuGraphExecKernelNodeSetParams");
    }
    check(cu_, cu_.cuGraphLaunch(exec_, owner_.stream()), "cuGraphLaunch");
  }

 private:
  // Launch i's node from its current arguments; false when they leave it no blocks.
  bool node_params(std::size_t i, cuda_kernel_node_params& p) {
    const std::uint64_t blocks = programs_[i]->prepare(args_.buffers(i), args_.vars(i), args_of_[i]);
    if (blocks == 0) return false;
    p.func = programs_[i]->function();
    p.grid_x = unsigned(blocks), p.grid_y = 1, p.grid_z = 1;
    p.block_x = unsigned(programs_[i]->block_size()), p.block_y = 1, p.block_z = 1;
    p.shared_bytes = 0;
    p.kernel_params = args_of_[i].params.data();  // the driver copies the values
    p.extra = nullptr;
    return true;
  }

  nv_backend& owner_;
  const cuda_driver& cu_;
  jit::graph_arguments args_;
  std::vector<std::shared_ptr<nv_program>> programs_;  // one per launch, in capture order
  std::vector<nv_kernel_args> args_of_;
  // The graph lives as long as its executable: a replay names its nodes to
  // cuGraphExecKernelNodeSetParams, and the driver refuses nodes of a destroyed graph
  // (CUDA_ERROR_INVALID_VALUE, seen on an H200 when the graph was destroyed once instantiated).
  CUgraph graph_ = nullptr;
  std::vector<CUgraphNode> nodes_;
  std::vector<bool> bound_;  // launches a replay's parameters reach
  CUgraphExec exec_ = nullptr;
};

}  // namespace

std::unique_ptr<executable_graph> nv_backend::make_graph(const graph_capture& capture) {
  if (!graphs_asked() || !cu_.has_graphs() || capture.launches.empty()) return backend::make_graph(capture);
  std::vector<std::shared_ptr<nv_program>> programs;
  nv_kernel_args scratch;
  for (const graph_launch& l : capture.launches) {
    auto p = std::dynamic_pointer_cast<nv_program>(l.compiled);
    if (p == nullptr) return backend::make_graph(capture);  // not an NV kernel (a search's stand-in)
    if (p->prepare(l.buffers, l.vars, scratch) == 0) return backend::make_graph(capture);  // empty at capture: no node
    programs.push_back(p);
  }
  return std::make_unique<nv_graph>(*this, capture, std::move(programs));
}

}  // namespace tg::nv
