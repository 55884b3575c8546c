// nv_program.cpp: see nv_program.hpp.
#include "drivers/nv/nv_program.hpp"

#include <tg/core/error.hpp>

namespace tg::nv {

void lay_out_kernel_args(const codegen::nvptx_kernel_shape& shape, std::span<const std::int64_t> vars, nv_kernel_args& args) {
  const std::size_t count = std::size_t(shape.buffers + shape.vars);
  args.values.resize(count);
  args.params.resize(count);
  for (int i = 0; i < shape.vars; ++i) args.values[std::size_t(shape.buffers + i)] = std::uint64_t(vars[std::size_t(i)]);
  for (std::size_t i = 0; i < count; ++i) args.params[i] = &args.values[i];
}

nv_program::~nv_program() {
  owner_.driver().cuCtxSetCurrent(owner_.context());
  owner_.driver().cuModuleUnload(module_);
}

std::uint64_t nv_program::prepare(std::span<void* const> buffers, std::span<const std::int64_t> vars,
                                  nv_kernel_args& args) const {
  if (buffers.size() < std::size_t(shape_.buffers) || vars.size() < std::size_t(shape_.vars))
    throw usage_error(str(owner_.name(), ": kernel '", name_, "' uses ", shape_.buffers, " buffers and ", shape_.vars,
                          " variables; launch gave ", buffers.size(), " and ", vars.size()));
  for (int i = 0; i < shape_.buffers; ++i)  // the kernel's loads rely on it (codegen::nvptx_buffer_align)
    if (reinterpret_cast<std::uintptr_t>(buffers[std::size_t(i)]) % codegen::nvptx_buffer_align != 0)
      throw usage_error(str(owner_.name(), ": kernel '", name_, "': buffer slot ", i, " at ", buffers[std::size_t(i)],
                            " is not ", codegen::nvptx_buffer_align, "-byte aligned (NV kernels take whole allocations)"));
  lay_out_kernel_args(shape_, vars, args);
  for (int i = 0; i < shape_.buffers; ++i)
    args.values[std::size_t(i)] = std::uint64_t(reinterpret_cast<std::uintptr_t>(buffers[std::size_t(i)]));
  return codegen::nvptx_blocks(nodes_, global_ranges_, shape_, vars);
}

void nv_program::launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) {
  nv_kernel_args args;
  const std::uint64_t blocks = prepare(buffers, vars, args);
  if (blocks == 0) return;  // an empty output
  owner_.make_current();
  check(owner_.driver(), owner_.driver().cuLaunchKernel(function_, unsigned(blocks), 1, 1, unsigned(shape_.block_size), 1, 1, 0,
                                                        owner_.stream(), args.params.data(), nullptr),
        "cuLaunchKernel");
}

}  // namespace tg::nv
