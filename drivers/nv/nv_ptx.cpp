// nv_ptx.cpp: see nv_ptx.hpp.
#include "drivers/nv/nv_ptx.hpp"

#include <algorithm>

#include "runtime/codegen/gpu_frame.hpp"
#include "runtime/device/pipeline.hpp"

namespace tg::nv {

namespace {

struct nv_rendered final : rendered_kernel {
  codegen::nvptx_kernel_shape shape;
};

}  // namespace

nv_ptx_renderer::nv_ptx_renderer(const nv_device_info& card) : nvptx_(card.arch) {
  traits_.of = opt::target_traits::kind::gpu;
  // Threads that fill the GPU: each SM holds 2048 (every architecture from sm_80 on).
  traits_.gpu.busy_threads = std::max(1, card.multiprocessors) * 2048;
  traits_.gpu.max_reduce_unroll = codegen::max_gpu_reduce_unroll;
  traits_.gpu.min_thread_block_bytes = 4;  // these two: opt::gpu_traits, measured on an H200
  traits_.gpu.max_split_trips = 16;
  traits_.gpu.sparse_block_bytes = 16;
}

std::unique_ptr<rendered_kernel> nv_ptx_renderer::render(const kernel_source& source, const codegen::kernel_opts& opts) {
  auto r = std::make_unique<nv_rendered>();
  begin_render(*r, source, opts);
  nvptx_.prepare(*r->module);
  r->symbol = source.name;
  r->shape = codegen::emit_nvptx_kernel(*r->module, source.name, source.nodes, source.global_ranges, block_size, opts);
  return r;
}

nv_ptx_kernel nv_ptx_renderer::to_ptx(rendered_kernel& rendered) {
  auto& r = static_cast<nv_rendered&>(rendered);
  nv_ptx_kernel k;
  k.ptx = nvptx_.compile(*r.module, r.symbol);
  k.name = r.name;
  k.symbol = r.symbol;
  k.nodes = std::move(r.nodes);
  k.global_ranges = r.global_ranges;
  k.shape = r.shape;
  return k;
}

nv_ptx_kernel nv_ptx_renderer::compile(const kernel_source& source) {
  std::unique_ptr<rendered_kernel> r = render(source, opt::choose_opts_for(traits_, source));
  return to_ptx(*r);
}

}  // namespace tg::nv
