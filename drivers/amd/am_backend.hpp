// am_backend.hpp: the "AMD" backend: tg::backend over an am_device (drivers/amd/am_device.hpp),
// on a real card (PCI or the USB bridge) or on the emulated one (AMD:EMU, drivers/emu/emu_device.hpp).
//
// Every backend fills the same slots (backend.hpp). Here:
//   - allocate: VRAM mapped at a fresh GPU VA; the void* handed out is that VA, never
//     dereferenced on the host (as tinygrad's AMD buffers);
//   - release: after the queues went idle; after a queue failure the buffer is leaked, still
//     mapped, since nobody can say whether a queued kernel still uses it;
//   - copy_in / copy_out: through am_device (BAR0, the USB window or a DMA bounce buffer), after
//     the kernels queued so far (a host wait on the compute queue) and complete on return;
//   - programs: a code object's kernel loaded into VRAM (load_program); launch writes the kernargs
//     as layout_kernargs lays them out and dispatches with pm4::emit_dispatch, without waiting;
//   - compile from a tg AST (am_backend_compile.cpp): the kernel rendered for the device's
//     processor (runtime/codegen/amdgpu_kernel.hpp), compiled in process (amdgpu_compiler.hpp)
//     and loaded as above, its grid computed at each launch from the variables;
//   - graphs (am_graph.cpp): the launches of a graph as one indirect buffer with their kernargs,
//     patched in place and submitted once per replay.
//
//   tg::device dev("AMD:USB:0");                      // am_backend_registration.cpp
//   auto& amd = dynamic_cast<tg::amd::am_backend&>(dev.impl());
//   auto p = amd.load_program(co, "add", args, {.workgroups = {4, 1, 1}, .workgroup_size = {64, 1, 1}});
//   p->launch(buffers, {});
//
// After device().recover_compute() (a BEAM candidate that faulted the GPU) programs loaded and
// graphs captured before it go on working: the queue's timeline continues in a new epoch, where
// the submissions their kernarg slots and frames remember count as complete.
// Programs keep a reference to their backend and must not outlive it (tg::device drops its
// programs first). Not thread-safe: one host thread uses a backend.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/amd/am_device.hpp"
#include "drivers/amd/code_object.hpp"
#include "drivers/amd/code_object_kernargs.hpp"
#include <tg/device/backend.hpp>
#include "runtime/opt/target_opts.hpp"
#include "runtime/transport/transport.hpp"


namespace tg::amd {

// The grid a loaded program is dispatched with (tg's program::launch carries none).
struct am_launch_shape {
  std::array<std::uint32_t, 3> workgroups{1, 1, 1};
  std::array<std::uint32_t, 3> workgroup_size{64, 1, 1};
};

class am_program;

// What one launch of an AMD program dispatches, from its arguments: the loaded kernel, how many of
// the launch's buffers and variables it takes, and the grid (no workgroups: nothing to dispatch).
// launch does what it says; graphs (am_graph.cpp) write it into their indirect buffer.
struct am_dispatch_plan {
  am_program* kernel = nullptr;
  std::size_t buffers = 0, vars = 0;
  am_launch_shape shape;
  bool is_empty() const { return std::uint64_t{shape.workgroups[0]} * shape.workgroups[1] * shape.workgroups[2] == 0; }
};

// usage_error unless a buffer argument of `kernel` lies on codegen::amdgpu_buffer_align, as the
// kernel's loads assume (launches and graph replays check each).
void check_buffer_alignment(const std::string& device, const std::string& kernel, std::size_t slot, std::uint64_t address);

// Both kinds of AMD program: a loaded code object (am_program) and a compiled tg kernel
// (am_backend_compile.cpp). plan_launch checks the argument counts as launch does (usage_error).
class am_dispatchable : public program {
 public:
  virtual am_dispatch_plan plan_launch(std::size_t buffer_count, std::span<const std::int64_t> vars) = 0;
  // Whether variable `index` can change what the kernel does: its kernarg is read or its grid
  // depends on it. A kernel takes the variables up to the highest it reads, so a lower one may
  // be passed and never read; a graph need not patch that one on replay.
  virtual bool reads_variable(std::size_t /*index*/) const { return true; }
};

class am_backend : public backend {
 public:
  // Boots an am_device on `t`. `keep_alive` outlives the transport (the buses it was opened from,
  // or an emulated machine); `name` is what name() and error messages say ("AMD", "AMD:EMU").
  am_backend(std::string name, std::unique_ptr<transport::device_transport> t, const am_options& options,
             std::shared_ptr<void> keep_alive = {});
  ~am_backend() override;

  std::string name() const override { return name_; }
  void* allocate(std::size_t size_bytes) override;
  void release(void* memory) override;
  void copy_in(void* device_dst, const void* host_src, std::size_t size_bytes) override;
  void copy_out(void* host_dst, const void* device_src, std::size_t size_bytes) override;
  // The run-time pipeline's slots for tg kernels (am_backend_compile.cpp): GPU traits, the AMDGPU
  // renderer, and the in-process compiler, linker and loader for the device's processor.
  kernel_compiler* compiler() override;
  // What the pipeline schedules this device's kernels by (compiler()->traits(), for code that
  // does not include the compiler's LLVM headers: BEAM's runner on AMD:EMU).
  const opt::target_traits& kernel_traits();
  void synchronize() override;
  // One indirect buffer per graph, replayed with one submission (am_graph.cpp).
  std::unique_ptr<executable_graph> make_graph(const graph_capture& capture) override;
  // The VRAM heaps' free bytes less the page tables that mapping them could take (am_memory.hpp).
  std::optional<std::uint64_t> free_bytes() const override { return device_->free_bytes(); }
  // The USB bridge's transfers (runtime/transport/usb/usb_device.hpp); nullopt on PCI.
  std::optional<link_counts> link_traffic() const override {
    const auto c = transport_->link_traffic();
    if (!c) return std::nullopt;
    return link_counts{c->transfers, c->bytes_out, c->bytes_in, waiting_transfers_};
  }

  // Kernel `kernel` of `co` in VRAM. At launch the buffers fill the first arguments of `args`
  // (pointers) and the vars the rest.
  std::shared_ptr<am_program> load_program(const code_object& co, std::string_view kernel,
                                           std::span<const kernarg> args, am_launch_shape shape);

  am_device& device() { return *device_; }
  std::chrono::milliseconds queue_timeout() const { return queue_timeout_; }
  // The allocation holding [device_ptr, +size_bytes) (an address allocate returned plus an
  // offset); usage_error naming `what` otherwise.
  const allocation& allocation_of(const void* device_ptr, std::size_t size_bytes, const char* what) const;

 private:
  friend class am_program;
  void wait_for_kernels();  // the host waits for every dispatch submitted so far
  // Runs a host wait on the GPU and adds the link transfers it made (its polls) to waiting_transfers_.
  template <class Wait>
  void counted_wait(Wait&& wait) {
    const auto before = transport_->link_traffic();
    wait();
    if (const auto after = transport_->link_traffic(); before && after) waiting_transfers_ += after->transfers - before->transfers;
  }

  std::string name_;
  std::shared_ptr<void> keep_alive_;  // declared first: destroyed after the transport
  std::unique_ptr<transport::device_transport> transport_;
  std::unique_ptr<am_device> device_;
  std::chrono::milliseconds queue_timeout_;
  std::map<std::uint64_t, allocation> allocations_;  // by VA
  std::vector<allocation> program_memory_;            // code and kernargs, freed with the device
  std::unique_ptr<kernel_compiler> compiler_;  // made on first use, for the device's processor
  std::uint64_t waiting_transfers_ = 0;        // link_counts::waiting
};

// A loaded kernel: its image in VRAM and kernarg slots for launches in flight.
class am_program final : public am_dispatchable {
 public:
  static constexpr std::size_t kernarg_slots = 16;  // launches in flight before one is waited for

  am_program(am_backend& owner, const code_object& co, std::string_view kernel, std::span<const kernarg> args,
             am_launch_shape shape);

  void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) override;
  // The same with a grid of this launch's own (a compiled tg kernel's depends on the variables).
  void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars, const am_launch_shape& shape);
  am_dispatch_plan plan_launch(std::size_t buffer_count, std::span<const std::int64_t> vars) override;

  // The kernargs of a launch laid out in `block` (kernarg_block_bytes() of them; hidden arguments
  // zero); usage_error for a wrong argument count or a buffer not of this device.
  void write_kernargs(std::span<std::byte> block, std::span<void* const> buffers, std::span<const std::int64_t> vars);
  std::uint64_t kernarg_block_bytes() const { return slot_bytes_; }
  std::span<const kernarg> args() const { return args_; }
  const am_backend& owner() const { return owner_; }
  const std::string& name() const { return name_; }

  const queue::pm4::kernel_summary& summary() const { return summary_; }
  const kernarg_layout& layout() const { return layout_; }

 private:
  am_backend& owner_;
  std::string name_;
  std::vector<kernarg> args_;
  kernarg_layout layout_;
  am_launch_shape shape_;
  queue::pm4::kernel_summary summary_;
  allocation kernargs_;
  std::uint64_t slot_bytes_ = 0;
  std::array<queue::submission, kernarg_slots> slot_use_{};
  std::size_t next_slot_ = 0;
};

}  // namespace tg::amd
