// nv_ptx.hpp: a tg kernel as PTX text for one NVIDIA architecture, without a CUDA context: the
// run-time pipeline's opts and render steps and the first half of its compile step
// (runtime/device/pipeline.hpp), with the GPU heuristic's traits for the card. The NV backend
// loads what it makes into its own context (nv_compile.cpp); BEAM's runner hands it to a worker
// process that loads it into another (nv_candidate_runner.hpp).
//
//   tg::nv::nv_ptx_renderer r(info);                    // info: the card's nv_device_info
//   tg::nv::nv_ptx_kernel k = r.compile(source);        // its PTX, entry and launch shape
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <tg/ast/node.hpp>
#include <tg/device/backend.hpp>

#include "drivers/nv/nv_backend.hpp"
#include "runtime/codegen/nvptx_compiler.hpp"
#include "runtime/codegen/nvptx_kernel.hpp"
#include "runtime/device/kernel_compiler.hpp"

namespace tg::nv {

struct nv_ptx_kernel {
  std::string name;    // the kernel's, for messages
  std::string symbol;  // its .entry
  std::string ptx;
  std::vector<ast::node> nodes;
  int global_ranges = 0;
  codegen::nvptx_kernel_shape shape;  // parameters and threads per block, for the launch
};

class nv_ptx_renderer {
 public:
  static constexpr int block_size = 256;  // threads per block: 8 warps, as AMD's 8 waves

  explicit nv_ptx_renderer(const nv_device_info& card);

  const opt::target_traits& traits() const { return traits_; }
  const std::string& arch() const { return nvptx_.arch(); }
  // The pipeline's render step: the kernel AST with `opts` as LLVM IR for the card.
  std::unique_ptr<rendered_kernel> render(const kernel_source& source, const codegen::kernel_opts& opts);
  // The IR of render() as PTX.
  nv_ptx_kernel to_ptx(rendered_kernel& rendered);
  // All three for `source`, its opts chosen as every GPU kernel's are (opt::choose_opts_for).
  nv_ptx_kernel compile(const kernel_source& source);

 private:
  codegen::nvptx_compiler nvptx_;
  opt::target_traits traits_;
};

}  // namespace tg::nv
