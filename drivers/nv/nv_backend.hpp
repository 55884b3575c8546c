// nv_backend.hpp: the "NV" device (and "NV:<n>"): an NVIDIA GPU through the CUDA driver API
// (cuda_driver.hpp, loaded at run time), in the same slots as every backend
// (include/tg/device/backend.hpp): device memory, copies (large ones staged through pinned host
// memory in chunks, so a copy of the weights overlaps the host's memcpy with the DMA), one stream
// that every launch and copy goes through in order, and the run-time pipeline's compiler slots
// (nv_compile.cpp: the NVPTX renderer and PTX loaded by the driver's JIT). Without libcuda, or
// without a GPU, opening it fails with a message that says which.
//
//   tg::device gpu("NV");                 // the first NVIDIA GPU
//   auto out = gpu.run(plan, {{"x", xs}});
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <tg/device/backend.hpp>

#include "drivers/nv/cuda_driver.hpp"

namespace tg::nv {

struct nv_device_info {
  std::string name;          // cuDeviceGetName: "NVIDIA H200"
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  std::uint64_t memory_bytes = 0;
  std::string arch;          // the PTX target for it (runtime/codegen/nvptx_compiler.hpp: nvptx_arch_for)
};

class nv_backend final : public backend {
 public:
  // GPU `ordinal` (0 for "NV"); device_error when the driver, a GPU or that GPU is missing.
  explicit nv_backend(int ordinal);
  ~nv_backend() override;

  std::string name() const override { return name_; }
  void* allocate(std::size_t size_bytes) override;
  void release(void* memory) override;
  void copy_in(void* device_dst, const void* host_src, std::size_t size_bytes) override;
  void copy_out(void* host_dst, const void* device_src, std::size_t size_bytes) override;
  kernel_compiler* compiler() override;
  std::optional<std::uint64_t> free_bytes() const override;  // cuMemGetInfo's free memory
  // Waits for the stream; device_error naming the device after `timeout` (a kernel that never ends).
  void synchronize() override;
  // CUDA events recorded on the stream around each launch, read at finish (nv_launch_timer.cpp).
  std::unique_ptr<launch_timer> make_launch_timer() override;
  // A CUDA graph (nv_graph.cpp); with TG_NV_GRAPHS=0, the launch list every backend has.
  std::unique_ptr<executable_graph> make_graph(const graph_capture& capture) override;

  const nv_device_info& info() const { return info_; }
  int ordinal() const { return ordinal_; }
  const cuda_driver& driver() const { return cu_; }
  CUstream stream() const { return stream_; }
  CUcontext context() const { return context_; }
  void make_current() const;  // the device's context on the calling thread
  std::chrono::seconds timeout{60};

 private:
  // Chunks of a large copy through the two halves of the pinned staging buffer.
  void ensure_staging();
  void staged_in(CUdeviceptr dst, const std::byte* src, std::size_t bytes);
  void staged_out(std::byte* dst, CUdeviceptr src, std::size_t bytes);

  const cuda_driver& cu_;
  std::string name_;
  int ordinal_ = 0;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  nv_device_info info_;
  std::byte* staging_ = nullptr;  // pinned, 2 x staging_half bytes, made at the first large copy
  CUevent staged_[2] = {nullptr, nullptr};
  std::unique_ptr<kernel_compiler> compiler_;
};

}  // namespace tg::nv
