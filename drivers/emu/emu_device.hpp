// emu_device.hpp: the "AMD:EMU" backend: tg::backend on the emulated GPU through emu_driver.
//
// Every backend fills the same slots (backend.hpp). Here:
//   - allocate: VRAM from the driver's allocator, mapped into the GPU VA space. The void* handed
//     out is the GPU VA, never dereferenced on the host (as tinygrad's AMD buffers);
//   - release: unmap (TLB flush), free VA and VRAM, after the queues went idle (after a queue
//     failure the buffer is leaked, still mapped, since it cannot be known to be unused);
//   - copy_in / copy_out: SDMA copies through a host-visible staging buffer in VRAM, in bounded
//     chunks (two halves, so the host fills one while the engine copies the other);
//   - programs: a code object (drivers/amd/code_object.hpp) loaded into VRAM plus a host twin
//     registered at its entry address, since the emulator runs no ISA. The launch writes the
//     kernargs as layout_kernargs lays them out and dispatches with pm4::emit_dispatch;
//   - compile from a tg AST is not available: there is no AMD code generator yet (usage_error).
// Ordering between the queues is kept on the GPU: a dispatch first waits (WAIT_REG_MEM) for the
// SDMA timeline to reach the last copy submitted; a copy_out waits for the compute queue on the host.
//
//   auto dev = std::make_shared<tg::emu::emu_device>(tg::emu::emu_driver_config{.gen = tg::emu::gfx_gen::gfx12});
//   auto p = dev->load_program(co, "add", args, {.workgroups = {4, 1, 1}, .workgroup_size = {64, 1, 1}}, twin);
//   p->launch(buffers, {});
//
// After emu_driver::recover_compute the timeline restarts, so programs launched before it must
// not be launched again (their kernarg slots remember submissions of the old queue).
// Programs keep a reference to their device: they must not outlive it (tg::device holds both).
// Not thread-safe: one host thread uses a device.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/amd/code_object.hpp"
#include "drivers/amd/code_object_kernargs.hpp"
#include "drivers/emu/emu_driver.hpp"
#include "runtime/device/backend.hpp"

namespace tg::emu {

// The grid a loaded program is dispatched with (tg's program::launch carries none).
struct emu_launch_shape {
  std::array<std::uint32_t, 3> workgroups{1, 1, 1};
  std::array<std::uint32_t, 3> workgroup_size{64, 1, 1};
};

class emu_device final : public backend {
 public:
  static constexpr std::uint64_t staging_bytes = 1ull << 20;  // two 512 KiB halves

  explicit emu_device(const emu_driver_config& config = {});
  ~emu_device() override;

  std::string name() const override { return "AMD:EMU"; }
  void* allocate(std::size_t size_bytes) override;
  void release(void* memory) override;
  void copy_in(void* device_dst, const void* host_src, std::size_t size_bytes) override;
  void copy_out(void* host_dst, const void* device_src, std::size_t size_bytes) override;
  std::shared_ptr<program> compile(const kernel_source& source) override;
  void synchronize() override { synchronize(queue::default_wait_timeout); }
  void synchronize(std::chrono::milliseconds timeout);

  // Loads kernel `kernel` of `co` into VRAM and registers `host_twin` at its entry address. At
  // launch, the buffers fill the first arguments of `args` (pointers) and the vars the rest.
  std::shared_ptr<program> load_program(const amd::code_object& co, std::string_view kernel,
                                        std::span<const amd::kernarg> args, emu_launch_shape shape, kernel_fn host_twin);

  emu_driver& driver() { return driver_; }
  // The allocation holding `device_ptr` (an address allocate returned, plus an offset).
  const emu_allocation& allocation_of(const void* device_ptr, std::size_t size_bytes, const char* what) const;

 private:
  friend class emu_program;
  // Commands that make the compute queue wait for every copy submitted so far.
  void emit_wait_for_copies(queue::cmd_buffer& cb);
  void emit_wait_for_kernels(queue::cmd_buffer& cb);  // the SDMA twin: wait for dispatches
  queue::queue_memory staging_half(int half) const;

  emu_driver driver_;
  std::map<std::uint64_t, emu_allocation> allocations_;  // by VA
  emu_allocation staging_;
  queue::submission staging_use_[2]{};  // the last copy that read or wrote each half
  std::vector<emu_allocation> code_;    // loaded programs' images, freed with the device
};

}  // namespace tg::emu
