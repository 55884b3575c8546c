// target_opts.cpp: opts from the author's loop shape or the target's default heuristic (see target_opts.hpp).
#include "runtime/opt/target_opts.hpp"

#include <tg/core/error.hpp>

#include "runtime/opt/heuristic.hpp"

namespace tg::opt {

codegen::kernel_opts choose_opts_for(const target_traits& target, const kernel_source& source) {
  if (target.of == target_traits::kind::gpu) {
    if (source.group_lanes < 1) return choose_gpu_opts(source.nodes, source.global_ranges, target.gpu, source.upcast);
    return gpu_schedule_of(source);  // a tuned schedule; the renderer checks it
  }
  codegen::kernel_opts opts;
  if (source.upcast.empty()) {
    opts = choose_opts(source.nodes, source.global_ranges, target.isa.vector_bits);
  } else {
    if (int(source.upcast.size()) != source.global_ranges)
      throw usage_error(str("kernel ", source.name, " gives ", source.upcast.size(), " upcasts for ",
                            source.global_ranges, " output ranges"));
    opts.upcast = source.upcast;
    opts.vector_lanes = source.vector_lanes;
    opts.panel = source.panel;
  }
  opts.isa = target.isa;
  return opts;
}

codegen::kernel_opts gpu_schedule_of(const kernel_source& source) {
  codegen::kernel_opts opts{source.upcast, false};
  opts.group_lanes = source.group_lanes;
  opts.reduce_unroll = source.reduce_unroll;
  opts.nested_lanes = source.nested_lanes;
  return opts;
}

}  // namespace tg::opt
