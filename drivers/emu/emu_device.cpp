// emu_device.cpp: memory and copies of the AMD:EMU backend (see emu_device.hpp); programs are in
// emu_device_program.cpp.
#include "drivers/emu/emu_device.hpp"

#include <algorithm>
#include <cstring>

#include <tg/error.hpp>

#include "drivers/emu/emu_device_program.hpp"
#include "runtime/queue/emit_signal.hpp"
#include "runtime/queue/sdma.hpp"

namespace tg::emu {

namespace {
constexpr std::uint64_t half_bytes = emu_device::staging_bytes / 2;
std::uint64_t va_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
}  // namespace

emu_device::emu_device(const emu_driver_config& config)
    : driver_(config), staging_(driver_.allocate(staging_bytes)) {}

emu_device::~emu_device() = default;  // the driver stops the emulator; its VRAM goes with it

void* emu_device::allocate(std::size_t size_bytes) {
  emu_allocation a = driver_.allocate(std::max<std::size_t>(size_bytes, 1));
  allocations_.emplace(a.va.value, a);
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(a.va.value));
}

void emu_device::release(void* memory) {
  auto it = allocations_.find(va_of(memory));
  if (it == allocations_.end())
    throw usage_error(str("AMD:EMU: release of ", memory::hex{va_of(memory)}, ", which allocate did not return"));
  // A queued kernel or copy may still use it; unmapping under it would fault. When a queue has
  // failed nobody can say, so the buffer stays mapped (leaked) instead: release runs from
  // destructors (tg::buffer) and must not throw.
  try {
    synchronize();
  } catch (const device_error&) {
    allocations_.erase(it);
    return;
  }
  driver_.release(it->second);
  allocations_.erase(it);
}

const emu_allocation& emu_device::allocation_of(const void* device_ptr, std::size_t size_bytes, const char* what) const {
  const std::uint64_t va = va_of(device_ptr);
  auto it = allocations_.upper_bound(va);
  if (it != allocations_.begin()) {
    --it;
    const emu_allocation& a = it->second;
    if (va - a.va.value <= a.bytes && size_bytes <= a.bytes - (va - a.va.value)) return a;
  }
  throw usage_error(str("AMD:EMU: ", what, ": [", memory::hex{va}, ", +", size_bytes,
                        ") is not inside one buffer of this device"));
}

queue::queue_memory emu_device::staging_half(int half) const {
  return staging_.memory().slice(std::size_t(half) * half_bytes, half_bytes);
}

void emu_device::emit_wait_for_copies(queue::cmd_buffer& cb) {
  emu_driver& d = driver_;
  const queue::submission last = d.copy().last_submitted();
  // A failed queue never reaches its last value; its error comes from synchronize instead.
  if (last.value > 0 && !d.copy().is_failed()) queue::emit_wait_signal_pm4(cb, d.copy().timeline_signal(), last.value);
}

void emu_device::emit_wait_for_kernels(queue::cmd_buffer& cb) {
  emu_driver& d = driver_;
  const queue::submission last = d.compute().last_submitted();
  if (last.value > 0 && !d.compute().is_failed()) queue::emit_wait_signal_sdma(cb, d.compute().timeline_signal(), last.value);
}

// Host -> staging half -> buffer, one chunk per half in turn: the host fills one half while SDMA
// drains the other. Returns once the data is in staging or beyond, so the host buffer is free.
void emu_device::copy_in(void* device_dst, const void* host_src, std::size_t size_bytes) {
  allocation_of(device_dst, size_bytes, "copy_in");
  const auto* src = static_cast<const std::byte*>(host_src);
  const std::uint64_t dst = va_of(device_dst);
  for (std::uint64_t done = 0, chunk = 0; done < size_bytes; ++chunk) {
    const int half = int(chunk % 2);
    const std::uint64_t n = std::min<std::uint64_t>(half_bytes, size_bytes - done);
    driver_.copy().wait(staging_use_[half], queue::default_wait_timeout);
    const queue::queue_memory stage = staging_half(half);
    std::memcpy(stage.host_view.data(), src + done, n);
    queue::cmd_buffer cb;
    emit_wait_for_kernels(cb);  // a kernel queued earlier may still read the old contents
    queue::sdma::emit_copy_linear(cb, queue::gpu_va{dst + done}, stage.va, n);
    staging_use_[half] = driver_.copy().submit(cb);
    done += n;
  }
}

// Buffer -> staging half -> host, after the kernels queued so far (waited for on the SDMA queue).
void emu_device::copy_out(void* host_dst, const void* device_src, std::size_t size_bytes) {
  allocation_of(device_src, size_bytes, "copy_out");
  auto* dst = static_cast<std::byte*>(host_dst);
  const std::uint64_t src = va_of(device_src);
  for (std::uint64_t done = 0; done < size_bytes;) {
    const std::uint64_t n = std::min<std::uint64_t>(half_bytes, size_bytes - done);
    driver_.copy().wait(staging_use_[0], queue::default_wait_timeout);
    const queue::queue_memory stage = staging_half(0);
    queue::cmd_buffer cb;
    emit_wait_for_kernels(cb);
    queue::sdma::emit_copy_linear(cb, stage.va, queue::gpu_va{src + done}, n);
    staging_use_[0] = driver_.copy().submit(cb);
    driver_.copy().wait(staging_use_[0], queue::default_wait_timeout);
    std::memcpy(dst + done, stage.host_view.data(), n);
    done += n;
  }
}

std::shared_ptr<program> emu_device::compile(const kernel_source& source) {
  throw usage_error(str("AMD:EMU: cannot compile kernel '", source.name,
                        "': there is no AMD code generator yet; load a code object with emu_device::load_program"));
}

std::shared_ptr<program> emu_device::load_program(const amd::code_object& co, std::string_view kernel,
                                                  std::span<const amd::kernarg> args, emu_launch_shape shape,
                                                  kernel_fn host_twin) {
  return std::make_shared<emu_program>(*this, co, kernel, args, shape, std::move(host_twin));
}

void emu_device::synchronize(std::chrono::milliseconds timeout) { driver_.synchronize(timeout); }

}  // namespace tg::emu
