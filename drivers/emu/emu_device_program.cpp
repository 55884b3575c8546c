// emu_device_program.cpp: programs of AMD:EMU: the code object loaded by am_backend, its host twin
// registered with the emulated GPU under the code bytes at the entry (see emu_device.hpp).
#include "drivers/emu/emu_device_program.hpp"

#include "drivers/emu/emu_device.hpp"

namespace tg::emu {

kernel_abi kernel_abi_of(const queue::pm4::kernel_summary& k) {
  namespace pm4 = queue::pm4;
  kernel_abi abi;
  if (k.code_properties & pm4::kcp_private_segment_buffer) abi.kernarg_sgpr += 4;
  if (k.code_properties & pm4::kcp_dispatch_ptr) abi.kernarg_sgpr += 2;
  if (k.code_properties & pm4::kcp_queue_ptr) abi.kernarg_sgpr += 2;
  return abi;
}

// The twin is registered before the first launch; the emulator finds it by the code bytes at the
// entry, read through the MMU at dispatch, as the command processor would fetch them.
std::shared_ptr<program> emu_device::load_program(const amd::code_object& co, std::string_view kernel,
                                                  std::span<const amd::kernarg> args, emu_launch_shape shape,
                                                  kernel_fn host_twin) {
  std::shared_ptr<amd::am_program> p = am_backend::load_program(co, kernel, args, shape);
  emulated_gpu().register_kernel_code(p->entry_code(), std::move(host_twin), kernel_abi_of(p->summary()));
  return p;
}

}  // namespace tg::emu
