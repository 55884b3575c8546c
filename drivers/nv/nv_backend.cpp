// nv_backend.cpp: the NV device's memory, copies, synchronization and registration (see nv_backend.hpp).
#include "drivers/nv/nv_backend.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <tg/core/error.hpp>
#include <tg/log.hpp>

#include "runtime/codegen/nvptx_compiler.hpp"
#include "runtime/device/kernel_compiler.hpp"

namespace tg::nv {

namespace {

// Copies up to this size go straight from pageable memory (the driver stages them itself); larger
// ones through two pinned halves of this size, one filled while the other is on its way.
constexpr std::size_t direct_copy_bytes = 1 << 20;
constexpr std::size_t staging_half = 16 << 20;

CUdeviceptr address(const void* p) { return CUdeviceptr(reinterpret_cast<std::uintptr_t>(p)); }

}  // namespace

nv_backend::nv_backend(int ordinal) : cu_(cuda_driver::load()), ordinal_(ordinal) {
  name_ = ordinal == 0 ? "NV" : str("NV:", ordinal);
  int count = 0;
  check(cu_, cu_.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count == 0) throw device_error("device 'NV': the NVIDIA driver found no GPU");
  if (ordinal < 0 || ordinal >= count)
    throw usage_error(str("device 'NV:", ordinal, "': this machine has ", count, " NVIDIA GPU", count == 1 ? "" : "s",
                          " (NV:0", count > 1 ? str(" .. NV:", count - 1) : std::string(), ")"));
  check(cu_, cu_.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  char name[256] = {};
  check(cu_, cu_.cuDeviceGetName(name, sizeof name - 1, device_), "cuDeviceGetName");
  info_.name = name;
  check(cu_, cu_.cuDeviceGetAttribute(&info_.major, attribute_compute_capability_major, device_), "cuDeviceGetAttribute");
  check(cu_, cu_.cuDeviceGetAttribute(&info_.minor, attribute_compute_capability_minor, device_), "cuDeviceGetAttribute");
  check(cu_, cu_.cuDeviceGetAttribute(&info_.multiprocessors, attribute_multiprocessor_count, device_),
        "cuDeviceGetAttribute");
  std::size_t total = 0;
  check(cu_, cu_.cuDeviceTotalMem(&total, device_), "cuDeviceTotalMem");
  info_.memory_bytes = total;
  info_.arch = codegen::nvptx_arch_for(info_.major, info_.minor);
  check(cu_, cu_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  make_current();
  check(cu_, cu_.cuStreamCreate(&stream_, 0), "cuStreamCreate");
  log(log_level::info, str(name_, ": ", info_.name, ", compute capability ", info_.major, ".", info_.minor, ", ",
                           info_.multiprocessors, " SMs, ", info_.memory_bytes >> 20, " MiB; kernels as ", info_.arch, " PTX"));
}

nv_backend::~nv_backend() {
  // Programs are gone (tg::device drops them first); nothing here may throw.
  cu_.cuCtxSetCurrent(context_);
  cu_.cuStreamSynchronize(stream_);
  compiler_.reset();
  for (CUevent e : staged_)
    if (e) cu_.cuEventDestroy(e);
  if (staging_) cu_.cuMemFreeHost(staging_);
  cu_.cuStreamDestroy(stream_);
  cu_.cuDevicePrimaryCtxRelease(device_);
}

std::optional<std::uint64_t> nv_backend::free_bytes() const {
  make_current();
  std::size_t free = 0, total = 0;
  check(cu_, cu_.cuMemGetInfo(&free, &total), "cuMemGetInfo");
  return free;
}

void nv_backend::make_current() const { check(cu_, cu_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

void* nv_backend::allocate(std::size_t size_bytes) {
  make_current();
  CUdeviceptr p = 0;
  const CUresult r = cu_.cuMemAlloc(&p, std::max<std::size_t>(size_bytes, 1));
  if (r != cuda_success) {
    std::size_t free = 0, total = 0;
    cu_.cuMemGetInfo(&free, &total);
    throw device_error(str(name_, ": cannot allocate ", size_bytes, " bytes (", free >> 20, " of ", total >> 20,
                           " MiB free): ", describe(cu_, r, "cuMemAlloc")));
  }
  return reinterpret_cast<void*>(std::uintptr_t(p));
}

void nv_backend::release(void* memory) {
  if (memory == nullptr) return;
  make_current();
  cu_.cuStreamSynchronize(stream_);  // kernels queued may still read it
  check(cu_, cu_.cuMemFree(address(memory)), "cuMemFree");
}

void nv_backend::copy_in(void* device_dst, const void* host_src, std::size_t size_bytes) {
  make_current();
  if (size_bytes <= direct_copy_bytes) {
    check(cu_, cu_.cuMemcpyHtoDAsync(address(device_dst), host_src, size_bytes, stream_), "cuMemcpyHtoDAsync");
    check(cu_, cu_.cuStreamSynchronize(stream_), "cuStreamSynchronize");  // the host may reuse its memory on return
    return;
  }
  staged_in(address(device_dst), static_cast<const std::byte*>(host_src), size_bytes);
}

void nv_backend::copy_out(void* host_dst, const void* device_src, std::size_t size_bytes) {
  make_current();
  if (size_bytes <= direct_copy_bytes) {
    check(cu_, cu_.cuMemcpyDtoHAsync(host_dst, address(device_src), size_bytes, stream_), "cuMemcpyDtoHAsync");
    check(cu_, cu_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
    return;
  }
  staged_out(static_cast<std::byte*>(host_dst), address(device_src), size_bytes);
}

void nv_backend::ensure_staging() {
  if (staging_ != nullptr) return;
  void* p = nullptr;
  check(cu_, cu_.cuMemAllocHost(&p, 2 * staging_half), "cuMemAllocHost");
  staging_ = static_cast<std::byte*>(p);
  for (CUevent& e : staged_) check(cu_, cu_.cuEventCreate(&e, 0), "cuEventCreate");
  for (CUevent e : staged_) check(cu_, cu_.cuEventRecord(e, stream_), "cuEventRecord");
}

void nv_backend::staged_in(CUdeviceptr dst, const std::byte* src, std::size_t bytes) {
  ensure_staging();
  for (std::size_t done = 0, half = 0; done < bytes; done += staging_half, half ^= 1) {
    const std::size_t n = std::min(staging_half, bytes - done);
    check(cu_, cu_.cuEventSynchronize(staged_[half]), "cuEventSynchronize");  // this half's last copy has left
    std::memcpy(staging_ + half * staging_half, src + done, n);
    check(cu_, cu_.cuMemcpyHtoDAsync(dst + done, staging_ + half * staging_half, n, stream_), "cuMemcpyHtoDAsync");
    check(cu_, cu_.cuEventRecord(staged_[half], stream_), "cuEventRecord");
  }
  check(cu_, cu_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

void nv_backend::staged_out(std::byte* dst, CUdeviceptr src, std::size_t bytes) {
  ensure_staging();
  for (std::size_t done = 0; done < bytes; done += staging_half) {
    const std::size_t n = std::min(staging_half, bytes - done);
    check(cu_, cu_.cuMemcpyDtoHAsync(staging_, src + done, n, stream_), "cuMemcpyDtoHAsync");
    check(cu_, cu_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
    std::memcpy(dst + done, staging_, n);
  }
}

void nv_backend::synchronize() {
  make_current();
  // The stream is polled rather than waited on, so a kernel that never ends is reported after
  // `timeout`. For the first milliseconds (a decode step's whole span) the poll only yields the
  // core: a sleep overshoots by tens of microseconds to a millisecond, which a token at 100+ tok/s
  // would wait for at every step; after that it sleeps, backing off to 1 ms, so a long kernel does
  // not keep a core busy.
  const auto start = std::chrono::steady_clock::now(), deadline = start + timeout;
  constexpr auto spin_for = std::chrono::milliseconds(20);
  for (auto pause = std::chrono::microseconds(20);;) {
    const CUresult r = cu_.cuStreamQuery(stream_);
    if (r == cuda_success) return;
    if (r != cuda_error_not_ready) check(cu_, r, "cuStreamQuery");
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline)
      throw device_error(str(name_, ": the GPU's work did not finish within ", timeout.count(),
                             " s (a kernel that does not end?)"));
    if (now - start < spin_for) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
}

namespace {

// "NV" or "NV:<n>".
const backend_registration nv_registration("NV", [](const std::string& args, const device_options&) {
  int ordinal = 0;
  if (!args.empty()) {
    std::size_t used = 0;
    try {
      ordinal = std::stoi(args, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != args.size() || ordinal < 0)
      throw usage_error(str("device 'NV:", args, "': give a GPU number (NV:0, NV:1, ...)"));
  }
  return std::make_shared<nv_backend>(ordinal);
});

}  // namespace

}  // namespace tg::nv
