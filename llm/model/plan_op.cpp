// plan_op.cpp: binding a lowered plan's buffers to the model's (plan_op.hpp).
#include "llm/model/plan_op.hpp"

#include <tg/core/error.hpp>

namespace tg::model {

plan_op::plan_op(device& dev, const plan_view& plan, std::span<const var_bind> vars)
    : kernels_(bind_kernels(plan, vars)), names_(plan.buffers.size()), own_(plan.buffers.size()) {
  for (std::size_t b = 0; b < plan.buffers.size(); ++b) {
    const buffer_info& info = plan.buffers[b];
    if (info.role == buffer_role::input) names_[b] = info.name;
    else if (int(b) == plan.output) names_[b] = "out";
    else own_[b] = dev.allocate(std::size_t(bound_numel(plan, int(b), vars)) * std::size_t(size_bytes(info.dt)));
  }
}

void plan_op::slot_buffers(std::size_t i, std::span<const named_buffer> named, std::vector<buffer>& out) const {
  out.clear();
  for (int b : kernels_[i].buffers) {
    if (names_[std::size_t(b)].empty()) {
      out.push_back(own_[std::size_t(b)]);
      continue;
    }
    const named_buffer* found = nullptr;
    for (const named_buffer& n : named)
      if (n.name == names_[std::size_t(b)]) found = &n;
    if (!found) throw usage_error(str("plan_op: no buffer given for '", names_[std::size_t(b)], "'"));
    out.push_back(found->data);
  }
}

}  // namespace tg::model
