// am_backend.cpp: memory, copies and synchronization of the AMD backend (see am_backend.hpp);
// programs are in am_backend_program.cpp.
#include "drivers/amd/am_backend.hpp"

#include <algorithm>

#include "runtime/device/kernel_compiler.hpp"

#include <tg/core/error.hpp>

namespace tg::amd {

namespace {
std::uint64_t va_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
}  // namespace

am_backend::am_backend(std::string name, std::unique_ptr<transport::device_transport> t, const am_options& options,
                       std::shared_ptr<void> keep_alive)
    : name_(std::move(name)),
      keep_alive_(std::move(keep_alive)),
      transport_(std::move(t)),
      device_(std::make_unique<am_device>(*transport_, options)),
      queue_timeout_(options.queue_timeout) {}

// The device goes first (it dequeues and leaves the GPU ready for a warm boot), then the
// transport, then what the transport was opened from.
am_backend::~am_backend() = default;

void* am_backend::allocate(std::size_t size_bytes) {
  const allocation a = device_->allocate(std::max<std::size_t>(size_bytes, 1));
  allocations_.emplace(a.va.value, a);
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(a.va.value));
}

void am_backend::release(void* memory) {
  auto it = allocations_.find(va_of(memory));
  if (it == allocations_.end())
    throw usage_error(str(name_, ": release of ", hex{va_of(memory)}, ", which allocate did not return"));
  // A queued kernel or copy may still use it, and unmapping under it would fault. release runs
  // from destructors (tg::buffer) and must not throw, so after a queue failure the buffer stays
  // mapped (leaked) instead.
  try {
    synchronize();
  } catch (const device_error&) {
    allocations_.erase(it);
    return;
  }
  device_->release(it->second);
  allocations_.erase(it);
}

const allocation& am_backend::allocation_of(const void* device_ptr, std::size_t size_bytes, const char* what) const {
  const std::uint64_t va = va_of(device_ptr);
  auto it = allocations_.upper_bound(va);
  if (it != allocations_.begin()) {
    --it;
    const allocation& a = it->second;
    if (va - a.va.value <= a.bytes && size_bytes <= a.bytes - (va - a.va.value)) return a;
  }
  throw usage_error(str(name_, ": ", what, ": [", hex{va}, ", +", size_bytes,
                        ") is not inside one buffer of this device"));
}

// am_device's copies are complete when they return but are not ordered after compute work, so
// the host waits for the kernels queued so far: they may still read the old contents (copy_in)
// or not yet have written the new ones (copy_out). A failed queue reports its error here.
void am_backend::wait_for_kernels() {
  queue::queue_compute& q = device_->compute();
  counted_wait([&] { q.wait(q.last_submitted(), queue_timeout_); });
}

void am_backend::copy_in(void* device_dst, const void* host_src, std::size_t size_bytes) {
  const allocation& a = allocation_of(device_dst, size_bytes, "copy_in");
  wait_for_kernels();
  device_->copy_in(a, va_of(device_dst) - a.va.value, std::span(static_cast<const std::byte*>(host_src), size_bytes));
}

void am_backend::copy_out(void* host_dst, const void* device_src, std::size_t size_bytes) {
  const allocation& a = allocation_of(device_src, size_bytes, "copy_out");
  wait_for_kernels();
  device_->copy_out(std::span(static_cast<std::byte*>(host_dst), size_bytes), a, va_of(device_src) - a.va.value);
}

void am_backend::synchronize() {
  counted_wait([&] { device_->synchronize(queue_timeout_); });
}

std::shared_ptr<am_program> am_backend::load_program(const code_object& co, std::string_view kernel,
                                                     std::span<const kernarg> args, am_launch_shape shape) {
  return std::make_shared<am_program>(*this, co, kernel, args, shape);
}

}  // namespace tg::amd
