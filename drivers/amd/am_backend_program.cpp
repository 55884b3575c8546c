// am_backend_program.cpp: loading and launching programs of the AMD backend (see am_backend.hpp).
#include <algorithm>
#include <cstring>

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

#include "drivers/amd/am_backend.hpp"
#include "runtime/codegen/amdgpu_kernel.hpp"

namespace tg::amd {

am_program::am_program(am_backend& owner, const code_object& co, std::string_view kernel, std::span<const kernarg> args,
                       am_launch_shape shape)
    : owner_(owner), name_(kernel), args_(args.begin(), args.end()), layout_(layout_kernargs(co.kernel(kernel), args)),
      shape_(shape) {
  am_device& dev = owner.device();
  if (co.gfx() != dev.gfx() || co.processor() != dev.info().gfx_target)
    throw usage_error(str(owner.name(), ": kernel '", name_, "' was built for ", co.processor(), ", this device is ",
                          dev.info().gfx_target, " (code objects load on the processor they were compiled for)"));
  // The image goes in with one copy_in, as the reference uploads code; the device keeps it.
  const allocation code = dev.allocate(co.image_bytes(), false, co.load_alignment());
  owner.program_memory_.push_back(code);
  const std::vector<std::byte> image = co.image_at(code.va);
  dev.copy_in(code, 0, image);
  summary_ = co.summary(kernel, code.va);
  // Scratch for the kernel's private segment, grown before its first launch (am_scratch.hpp).
  if (const kernel_descriptor& kd = co.kernel(kernel).descriptor; kd.enables_private_segment())
    dev.ensure_scratch(kd.private_segment_fixed_size);

  slot_bytes_ = (std::max<std::uint64_t>(layout_.alloc_bytes, 8) + 255) / 256 * 256;
  kernargs_ = dev.allocate(slot_bytes_ * kernarg_slots);
  owner.program_memory_.push_back(kernargs_);
}

void check_buffer_alignment(const std::string& device, const std::string& kernel, std::size_t slot, std::uint64_t address) {
  if (address % codegen::amdgpu_buffer_align != 0)  // the kernel's loads rely on it
    throw usage_error(str(device, ": kernel '", kernel, "': buffer ", slot, " at ", hex{address}, " is not ",
                          codegen::amdgpu_buffer_align, "-byte aligned (AMD kernels take whole allocations)"));
}

void am_program::write_kernargs(std::span<std::byte> slot, std::span<void* const> buffers,
                                std::span<const std::int64_t> vars) {
  std::fill(slot.begin(), slot.end(), std::byte{0});  // hidden arguments stay zero (llvm/docs/AMDGPUUsage.rst)
  // tg's calling convention (backend.hpp): the buffers are the first arguments, the vars follow.
  if (args_.size() != buffers.size() + vars.size())
    throw usage_error(str(owner_.name(), ": kernel '", name_, "' takes ", args_.size(), " arguments; launch gave ",
                          buffers.size(), " buffers and ", vars.size(), " variables"));
  for (std::size_t i = 0; i < args_.size(); ++i) {
    std::uint64_t value;
    if (i < buffers.size()) {
      if (args_[i].size_bytes != kernarg_pointer.size_bytes)
        throw usage_error(str(owner_.name(), ": kernel '", name_, "': argument ", i, " gets a buffer but is not a pointer"));
      owner_.allocation_of(buffers[i], 0, "launch");  // a buffer of this device
      value = reinterpret_cast<std::uintptr_t>(buffers[i]);
      check_buffer_alignment(owner_.name(), name_, i, value);
    } else {
      value = std::uint64_t(vars[i - buffers.size()]);
    }
    std::memcpy(slot.data() + layout_.offsets[i], &value, args_[i].size_bytes);  // little-endian low bytes
  }
}

am_dispatch_plan am_program::plan_launch(std::size_t buffer_count, std::span<const std::int64_t> vars) {
  if (args_.size() != buffer_count + vars.size())
    throw usage_error(str(owner_.name(), ": kernel '", name_, "' takes ", args_.size(), " arguments; launch gave ",
                          buffer_count, " buffers and ", vars.size(), " variables"));
  return {this, buffer_count, vars.size(), shape_};
}

// The kernargs go in with a copy_in, complete on return, into a slot the GPU is done with; copies
// submitted before are complete too (am_device's copies wait for themselves), so the dispatch
// needs no wait on the copy queue.
void am_program::launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) {
  launch(buffers, vars, shape_);
}

void am_program::launch(std::span<void* const> buffers, std::span<const std::int64_t> vars,
                        const am_launch_shape& shape) {
  am_device& dev = owner_.device();
  const std::size_t slot = next_slot_;
  std::vector<std::byte> args(slot_bytes_);
  write_kernargs(args, buffers, vars);
  owner_.counted_wait([&] { dev.compute().wait(slot_use_[slot], owner_.queue_timeout_); });
  dev.copy_in(kernargs_, slot * slot_bytes_, args);

  queue::cmd_buffer cb;
  // The full acquire at the start of the job, as Linux opens every job (gfx_v11_0_emit_mem_sync /
  // gfx_v12_0_emit_mem_sync): the instruction cache (GLI) and L2 invalidated, so code a copy_in
  // put at an address that held other code, and kernargs written since, are read fresh. The
  // acquire inside emit_dispatch leaves I$ and L2 alone.
  queue::pm4::emit_acquire_mem(cb, queue::pm4::gcr_full_invalidate);
  queue::pm4::emit_dispatch(cb, summary_,
                            {.gfx = dev.gfx(),
                             .workgroups = shape.workgroups,
                             .workgroup_size = shape.workgroup_size,
                             .kernargs = kernargs_.va + slot * slot_bytes_,
                             .scratch = dev.scratch(),
                             .tmpring_size = dev.tmpring_size()});
  slot_use_[slot] = dev.compute().submit(cb);
  next_slot_ = (next_slot_ + 1) % kernarg_slots;
}

}  // namespace tg::amd
