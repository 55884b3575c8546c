// cuda_driver.cpp: dlopen of the CUDA driver and its function table (see cuda_driver.hpp).
#include "drivers/nv/cuda_driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <tg/core/error.hpp>

namespace tg::nv {

namespace {

std::string library_path() {
  const char* v = std::getenv("TG_LIBCUDA");
  return v && *v ? v : "libcuda.so.1";
}

// Each entry point by the name the driver exports it under (the _v2 names are the 64-bit ones
// cuda.h maps the plain names to).
template <class Fn>
void bind(void* lib, const char* name, Fn& fn, const std::string& path) {
  void* symbol = dlsym(lib, name);
  if (symbol == nullptr)
    throw device_error(str("device 'NV': ", path, " has no ", name, " (an NVIDIA driver too old for tg, or not the CUDA driver)"));
  fn = reinterpret_cast<Fn>(symbol);
}

// An entry point tg can do without: left null when the driver does not export it.
template <class Fn>
void bind_optional(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
}

std::unique_ptr<cuda_driver> open_driver() {
  const std::string path = library_path();
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    throw device_error(str("device 'NV': cannot load the CUDA driver ", path, " (", why ? why : "not found",
                           "): the NV device needs the NVIDIA driver installed"));
  }
  auto cu = std::make_unique<cuda_driver>();
  try {
    bind(lib, "cuInit", cu->cuInit, path);
    bind(lib, "cuGetErrorName", cu->cuGetErrorName, path);
    bind(lib, "cuGetErrorString", cu->cuGetErrorString, path);
    bind(lib, "cuDeviceGetCount", cu->cuDeviceGetCount, path);
    bind(lib, "cuDeviceGet", cu->cuDeviceGet, path);
    bind(lib, "cuDeviceGetName", cu->cuDeviceGetName, path);
    bind(lib, "cuDeviceGetAttribute", cu->cuDeviceGetAttribute, path);
    bind(lib, "cuDeviceTotalMem_v2", cu->cuDeviceTotalMem, path);
    bind(lib, "cuDevicePrimaryCtxRetain", cu->cuDevicePrimaryCtxRetain, path);
    bind(lib, "cuDevicePrimaryCtxRelease_v2", cu->cuDevicePrimaryCtxRelease, path);
    bind(lib, "cuCtxSetCurrent", cu->cuCtxSetCurrent, path);
    bind(lib, "cuMemGetInfo_v2", cu->cuMemGetInfo, path);
    bind(lib, "cuMemAlloc_v2", cu->cuMemAlloc, path);
    bind(lib, "cuMemFree_v2", cu->cuMemFree, path);
    bind(lib, "cuMemAllocHost_v2", cu->cuMemAllocHost, path);
    bind(lib, "cuMemFreeHost", cu->cuMemFreeHost, path);
    bind(lib, "cuMemcpyHtoDAsync_v2", cu->cuMemcpyHtoDAsync, path);
    bind(lib, "cuMemcpyDtoHAsync_v2", cu->cuMemcpyDtoHAsync, path);
    bind(lib, "cuMemcpyDtoDAsync_v2", cu->cuMemcpyDtoDAsync, path);
    bind(lib, "cuModuleLoadDataEx", cu->cuModuleLoadDataEx, path);
    bind(lib, "cuModuleGetFunction", cu->cuModuleGetFunction, path);
    bind(lib, "cuModuleUnload", cu->cuModuleUnload, path);
    bind(lib, "cuFuncGetAttribute", cu->cuFuncGetAttribute, path);
    bind(lib, "cuLaunchKernel", cu->cuLaunchKernel, path);
    bind(lib, "cuStreamCreate", cu->cuStreamCreate, path);
    bind(lib, "cuStreamDestroy_v2", cu->cuStreamDestroy, path);
    bind(lib, "cuStreamQuery", cu->cuStreamQuery, path);
    bind(lib, "cuStreamSynchronize", cu->cuStreamSynchronize, path);
    bind(lib, "cuEventCreate", cu->cuEventCreate, path);
    bind(lib, "cuEventDestroy_v2", cu->cuEventDestroy, path);
    bind(lib, "cuEventRecord", cu->cuEventRecord, path);
    bind(lib, "cuEventSynchronize", cu->cuEventSynchronize, path);
    bind(lib, "cuEventElapsedTime", cu->cuEventElapsedTime, path);
    bind_optional(lib, "cuGraphCreate", cu->cuGraphCreate);
    bind_optional(lib, "cuGraphDestroy", cu->cuGraphDestroy);
    bind_optional(lib, "cuGraphAddKernelNode", cu->cuGraphAddKernelNode);
    bind_optional(lib, "cuGraphInstantiateWithFlags", cu->cuGraphInstantiateWithFlags);
    bind_optional(lib, "cuGraphExecKernelNodeSetParams", cu->cuGraphExecKernelNodeSetParams);
    bind_optional(lib, "cuGraphLaunch", cu->cuGraphLaunch);
    bind_optional(lib, "cuGraphExecDestroy", cu->cuGraphExecDestroy);
  } catch (...) {
    dlclose(lib);
    throw;
  }
  if (const CUresult r = cu->cuInit(0); r != cuda_success) {
    const std::string what = r == cuda_error_no_device ? "the NVIDIA driver found no GPU" : "the CUDA driver did not start";
    const std::string detail = describe(*cu, r, "cuInit");
    dlclose(lib);
    throw device_error(str("device 'NV': ", what, " (", detail, ")"));
  }
  return cu;  // the library stays loaded for the process
}

}  // namespace

const cuda_driver& cuda_driver::load() {
  static std::mutex lock;
  static std::unique_ptr<cuda_driver> loaded;
  std::lock_guard<std::mutex> guard(lock);
  if (!loaded) loaded = open_driver();
  return *loaded;
}

std::string describe(const cuda_driver& cu, CUresult result, const char* call) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cu.cuGetErrorName(result, &name) != cuda_success || name == nullptr) name = "unknown CUresult";
  if (cu.cuGetErrorString(result, &text) != cuda_success || text == nullptr) text = "";
  return str(call, ": ", name, " ", result, *text ? str(" (", text, ")") : std::string());
}

void check(const cuda_driver& cu, CUresult result, const char* call) {
  if (result != cuda_success) throw device_error(str("NV: ", describe(cu, result, call)));
}

}  // namespace tg::nv
