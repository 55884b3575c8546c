// nv_program.hpp: a tg kernel loaded on an NVIDIA GPU (the NV backend's program): its module and
// entry, its grid from the launch's variables, and its parameters (buffer addresses, then
// variables), for a launch (cuLaunchKernel) and for a CUDA graph's kernel node (nv_graph.cpp).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <tg/ast/node.hpp>
#include <tg/device/backend.hpp>

#include "drivers/nv/cuda_driver.hpp"
#include "drivers/nv/nv_backend.hpp"
#include "runtime/codegen/nvptx_kernel.hpp"

namespace tg::nv {

// A launch's parameters as the driver takes them: a pointer to each value.
struct nv_kernel_args {
  std::vector<std::uint64_t> values;
  std::vector<void*> params;  // &values[i]
};

// `args` for a kernel of `shape` in the order of its parameters (codegen::emit_nvptx_kernel): each
// buffer's device address, then each variable. The variables are written here, the first
// shape.buffers values are the caller's to fill; it has checked the counts.
void lay_out_kernel_args(const codegen::nvptx_kernel_shape& shape, std::span<const std::int64_t> vars, nv_kernel_args& args);

class nv_program final : public program {
 public:
  nv_program(nv_backend& owner, CUmodule module, CUfunction function, std::vector<ast::node> nodes, int global_ranges,
             codegen::nvptx_kernel_shape shape, std::string name)
      : owner_(owner), module_(module), function_(function), nodes_(std::move(nodes)), global_ranges_(global_ranges),
        shape_(shape), name_(std::move(name)) {}
  ~nv_program() override;  // unloads the module; may not throw

  std::string describe() const override { return description_; }
  void set_description(std::string text) { description_ = std::move(text); }

  void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) override;

  // Checks the arguments (counts; each buffer on codegen::nvptx_buffer_align) and writes them into
  // `args`: the blocks of the grid for `vars`, 0 for an empty output. usage_error on bad ones.
  std::uint64_t prepare(std::span<void* const> buffers, std::span<const std::int64_t> vars, nv_kernel_args& args) const;

  CUfunction function() const { return function_; }
  int block_size() const { return shape_.block_size; }
  const std::string& name() const { return name_; }

 private:
  nv_backend& owner_;
  CUmodule module_;
  CUfunction function_;
  std::vector<ast::node> nodes_;
  int global_ranges_;
  codegen::nvptx_kernel_shape shape_;
  std::string name_;
  std::string description_;
};

}  // namespace tg::nv
