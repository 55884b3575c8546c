// emu_device_program.cpp: loading and launching AMD:EMU programs (see emu_device_program.hpp).
#include "drivers/emu/emu_device_program.hpp"

#include <algorithm>
#include <cstring>

#include <tg/error.hpp>

namespace tg::emu {

namespace {
// Where the kernarg pointer sits among the user SGPRs, from the SGPRs the descriptor enables
// ahead of it (facts 6.4): private segment buffer (4), dispatch pointer (2), queue pointer (2).
kernel_abi abi_of(const queue::pm4::kernel_summary& k) {
  namespace pm4 = queue::pm4;
  kernel_abi abi;
  if (k.code_properties & pm4::kcp_private_segment_buffer) abi.kernarg_sgpr += 4;
  if (k.code_properties & pm4::kcp_dispatch_ptr) abi.kernarg_sgpr += 2;
  if (k.code_properties & pm4::kcp_queue_ptr) abi.kernarg_sgpr += 2;
  return abi;
}
}  // namespace

emu_program::emu_program(emu_device& dev, const amd::code_object& co, std::string_view kernel,
                         std::span<const amd::kernarg> args, emu_launch_shape shape, kernel_fn host_twin)
    : dev_(dev), name_(kernel), args_(args.begin(), args.end()), layout_(amd::layout_kernargs(co.kernel(kernel), args)),
      shape_(shape) {
  emu_driver& d = dev.driver();
  if (co.gfx() != d.gfx())
    throw usage_error(str("AMD:EMU: kernel '", name_, "' was built for another gfx generation than this device"));
  // The image goes in through the BAR, as the reference uploads code (a one-time copy).
  emu_allocation code = d.allocate(co.image_bytes(), co.load_alignment());
  dev.code_.push_back(code);
  const std::vector<std::byte> image = co.image_at(queue::gpu_va{code.va.value});
  std::memcpy(code.host.data(), image.data(), image.size());
  summary_ = co.summary(kernel, queue::gpu_va{code.va.value});
  // The host twin is found by the code bytes at the entry, as the CP would fetch them.
  const std::size_t entry = std::size_t(summary_.entry.value - code.va.value);
  d.device().register_kernel_code(std::span(image).subspan(entry), std::move(host_twin), abi_of(summary_));

  slot_bytes_ = (std::max<std::uint64_t>(layout_.alloc_bytes, 8) + 255) / 256 * 256;
  kernargs_ = d.allocate(slot_bytes_ * kernarg_slots);
  dev.code_.push_back(kernargs_);
}

void emu_program::write_kernargs(std::span<std::byte> slot, std::span<void* const> buffers,
                                 std::span<const std::int64_t> vars) {
  std::memset(slot.data(), 0, slot.size());  // hidden arguments stay zero (facts 6.3)
  // tg's calling convention (backend.hpp): the buffers are the first arguments, the vars follow.
  if (args_.size() != buffers.size() + vars.size())
    throw usage_error(str("AMD:EMU: kernel '", name_, "' takes ", args_.size(), " arguments; launch gave ",
                          buffers.size(), " buffers and ", vars.size(), " variables"));
  for (std::size_t i = 0; i < args_.size(); ++i) {
    std::uint64_t value;
    if (i < buffers.size()) {
      if (args_[i].size_bytes != amd::kernarg_pointer.size_bytes)
        throw usage_error(str("AMD:EMU: kernel '", name_, "': argument ", i, " gets a buffer but is not a pointer"));
      dev_.allocation_of(buffers[i], 0, "launch");  // a buffer of this device
      value = reinterpret_cast<std::uintptr_t>(buffers[i]);
    } else {
      value = std::uint64_t(vars[i - buffers.size()]);
    }
    std::memcpy(slot.data() + layout_.offsets[i], &value, args_[i].size_bytes);  // little-endian low bytes
  }
}

void emu_program::launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) {
  emu_driver& d = dev_.driver();
  const std::size_t slot = next_slot_;
  next_slot_ = (next_slot_ + 1) % kernarg_slots;
  d.compute().wait(slot_use_[slot], queue::default_wait_timeout);  // the GPU is done with this slot
  const queue::queue_memory args = kernargs_.memory().slice(slot * slot_bytes_, slot_bytes_);
  write_kernargs(args.host_view, buffers, vars);

  queue::cmd_buffer cb;
  dev_.emit_wait_for_copies(cb);  // the inputs copied in before this launch
  queue::pm4::emit_dispatch(cb, summary_,
                            {.gfx = d.gfx(),
                             .workgroups = shape_.workgroups,
                             .workgroup_size = shape_.workgroup_size,
                             .kernargs = args.va,
                             .scratch = queue::gpu_va{d.scratch().value}});
  slot_use_[slot] = d.compute().submit(cb);
}

}  // namespace tg::emu
