// cuda_driver.hpp: the CUDA driver API, loaded at run time with dlopen("libcuda.so.1") (the NVIDIA
// driver installs it), so tg needs no CUDA toolkit to build or run and nothing else in tg depends
// on it. The types and constants are the driver API's (CUDA Driver API reference, cuda.h), written
// out here: a CUdeviceptr is a 64-bit device address, the handles are opaque pointers, a CUresult
// of 0 is success.
//
//   const tg::nv::cuda_driver& cu = tg::nv::cuda_driver::load();   // device_error if it cannot
//   tg::nv::check(cu, cu.cuMemAlloc(&p, bytes), "cuMemAlloc");      // device_error naming the call and the error
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace tg::nv {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = std::uint64_t;
using CUcontext = struct cu_context*;
using CUmodule = struct cu_module*;
using CUfunction = struct cu_function*;
using CUstream = struct cu_stream*;
using CUevent = struct cu_event*;
using CUgraph = struct cu_graph*;
using CUgraphNode = struct cu_graph_node*;
using CUgraphExec = struct cu_graph_exec*;

// CUDA_KERNEL_NODE_PARAMS as cuGraphAddKernelNode and cuGraphExecKernelNodeSetParams (the
// exported v1 entry points) take it: a kernel node's function, grid, block and parameters.
struct cuda_kernel_node_params {
  CUfunction func;
  unsigned grid_x, grid_y, grid_z;
  unsigned block_x, block_y, block_z;
  unsigned shared_bytes;
  void** kernel_params;
  void** extra;
};

inline constexpr CUresult cuda_success = 0;
inline constexpr CUresult cuda_error_no_device = 100;
inline constexpr CUresult cuda_error_not_ready = 600;
// CUdevice_attribute
inline constexpr int attribute_multiprocessor_count = 16;
inline constexpr int attribute_compute_capability_major = 75;
inline constexpr int attribute_compute_capability_minor = 76;
// CUfunction_attribute
inline constexpr int function_local_size_bytes = 3, function_num_regs = 4;
// CUjit_option
inline constexpr int jit_info_log_buffer = 3, jit_info_log_buffer_size_bytes = 4, jit_error_log_buffer = 5,
                     jit_error_log_buffer_size_bytes = 6;

struct cuda_driver {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuGetErrorName)(CUresult error, const char** name);
  CUresult (*cuGetErrorString)(CUresult error, const char** text);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuDeviceTotalMem)(std::size_t* bytes, CUdevice device);                  // _v2
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);                             // _v2
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuMemGetInfo)(std::size_t* free, std::size_t* total);                    // _v2
  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, std::size_t bytes);                    // _v2
  CUresult (*cuMemFree)(CUdeviceptr pointer);                                         // _v2
  CUresult (*cuMemAllocHost)(void** pointer, std::size_t bytes);                      // _v2
  CUresult (*cuMemFreeHost)(void* pointer);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream);  // _v2
  CUresult (*cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream);        // _v2
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream);  // _v2
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned options, int* option_keys,
                                 void** option_values);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuFuncGetAttribute)(int* value, int attribute, CUfunction function);
  CUresult (*cuLaunchKernel)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                             unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream, void** params,
                             void** extra);
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);                                       // _v2
  CUresult (*cuStreamQuery)(CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);                                          // _v2
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end);
  // CUDA graphs (CUDA 11.4 on): null where the driver lacks them, and NV graphs replay as
  // launch lists (nv_graph.cpp).
  CUresult (*cuGraphCreate)(CUgraph* graph, unsigned flags) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph graph) = nullptr;
  CUresult (*cuGraphAddKernelNode)(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                                   std::size_t dependency_count, const cuda_kernel_node_params* params) = nullptr;
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec* exec, CUgraph graph, unsigned long long flags) = nullptr;
  CUresult (*cuGraphExecKernelNodeSetParams)(CUgraphExec exec, CUgraphNode node,
                                             const cuda_kernel_node_params* params) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec) = nullptr;
  bool has_graphs() const {
    return cuGraphCreate && cuGraphDestroy && cuGraphAddKernelNode && cuGraphInstantiateWithFlags &&
           cuGraphExecKernelNodeSetParams && cuGraphLaunch && cuGraphExecDestroy;
  }

  // The driver of this process, loaded at the first call from $TG_LIBCUDA (default
  // "libcuda.so.1"; tests point it elsewhere) and initialized with cuInit(0). device_error saying
  // what is missing: the library (no NVIDIA driver installed), one of its functions (a driver too
  // old), or a GPU (cuInit's error). A failure is not remembered: the next call tries again.
  static const cuda_driver& load();
};

// "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
std::string describe(const cuda_driver& cu, CUresult result, const char* call);
// device_error with describe()'s text unless `result` is success.
void check(const cuda_driver& cu, CUresult result, const char* call);

}  // namespace tg::nv
