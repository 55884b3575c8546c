// plan_op.hpp: a plan from tg::lower bound to the model's dims (tg::bind_kernels), its inputs
// and output given by name at each launch, its intermediates allocated once here.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tg/device.hpp>
#include <tg/lower/bind.hpp>

namespace tg::model {

struct named_buffer {
  std::string_view name;  // a plan input's name, or "out" for its output
  buffer data;
};

class plan_op {
 public:
  plan_op() = default;
  plan_op(device& dev, const plan_view& plan, std::span<const var_bind> vars);
  plan_op(device& dev, const plan_view& plan, std::initializer_list<var_bind> vars)
      : plan_op(dev, plan, std::span<const var_bind>(vars.begin(), vars.size())) {}

  std::size_t size() const { return kernels_.size(); }
  const ast::kernel& kernel(std::size_t i) const { return kernels_[i].kernel; }
  // Kernel i's buffers, one per slot, into `out`; throws usage_error naming a missing buffer.
  void slot_buffers(std::size_t i, std::span<const named_buffer> named, std::vector<buffer>& out) const;

 private:
  std::vector<bound_kernel> kernels_;
  std::vector<std::string> names_;  // per plan buffer: an input's name, "out", or "" (intermediate)
  std::vector<buffer> own_;         // per plan buffer: the intermediates' memory
};

}  // namespace tg::model
