// emu_device_program.hpp: a program of the AMD:EMU backend: a code object's kernel in VRAM, its
// host twin registered at the entry address, and kernarg slots for launches in flight.
//
// launch() writes the kernargs where layout_kernargs puts them (the buffers into the first
// arguments, the vars into the rest), makes the compute queue wait for the copies
// submitted so far, and dispatches with pm4::emit_dispatch. It does not wait for the kernel.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/emu/emu_device.hpp"

namespace tg::emu {

class emu_program final : public program {
 public:
  static constexpr std::size_t kernarg_slots = 16;  // launches in flight before one is waited for

  emu_program(emu_device& dev, const amd::code_object& co, std::string_view kernel, std::span<const amd::kernarg> args,
              emu_launch_shape shape, kernel_fn host_twin);

  void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) override;

  gpu_va code_address() const { return gpu_va{summary_.entry.value}; }
  const amd::kernarg_layout& layout() const { return layout_; }

 private:
  void write_kernargs(std::span<std::byte> slot, std::span<void* const> buffers, std::span<const std::int64_t> vars);

  emu_device& dev_;
  std::string name_;
  std::vector<amd::kernarg> args_;
  amd::kernarg_layout layout_;
  emu_launch_shape shape_;
  queue::pm4::kernel_summary summary_;
  emu_allocation kernargs_;
  std::uint64_t slot_bytes_ = 0;
  std::array<queue::submission, kernarg_slots> slot_use_{};
  std::size_t next_slot_ = 0;
};

}  // namespace tg::emu
