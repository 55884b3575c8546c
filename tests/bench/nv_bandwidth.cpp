// nv_bandwidth.cpp: an NVIDIA GPU's memory bandwidth as a device-to-device copy measures it
// (cuMemcpyDtoDAsync of 1 GiB, timed with CUDA events, best of 10; a copy reads and writes each
// byte, so GB/s counts both), the figure the device check (scripts/device-check.sh) compares each
// decode kernel with. Prints the device, then one line "device-to-device copy: N GB/s".
#include <algorithm>
#include <cstdio>
#include <tg/device.hpp>

#include "drivers/nv/nv_backend.hpp"

int main(int argc, char** argv) {
  try {
    tg::device dev(argc > 1 ? argv[1] : "NV");
    auto& nv = dynamic_cast<tg::nv::nv_backend&>(dev.impl());
    const tg::nv::cuda_driver& cu = nv.driver();
    const std::size_t bytes = std::size_t(1) << 30;
    tg::buffer a = dev.allocate(bytes), b = dev.allocate(bytes);
    tg::nv::CUevent start = nullptr, end = nullptr;
    nv.make_current();
    tg::nv::check(cu, cu.cuEventCreate(&start, 0), "cuEventCreate");
    tg::nv::check(cu, cu.cuEventCreate(&end, 0), "cuEventCreate");
    auto address = [](const tg::buffer& x) { return tg::nv::CUdeviceptr(reinterpret_cast<std::uintptr_t>(x.data())); };
    float best_ms = 1e30f;
    for (int i = 0; i < 11; ++i) {
      tg::nv::check(cu, cu.cuEventRecord(start, nv.stream()), "cuEventRecord");
      tg::nv::check(cu, cu.cuMemcpyDtoDAsync(address(b), address(a), bytes, nv.stream()), "cuMemcpyDtoDAsync");
      tg::nv::check(cu, cu.cuEventRecord(end, nv.stream()), "cuEventRecord");
      tg::nv::check(cu, cu.cuEventSynchronize(end), "cuEventSynchronize");
      float ms = 0;
      tg::nv::check(cu, cu.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
      if (i > 0) best_ms = std::min(best_ms, ms);  // the first copy warms up
    }
    std::printf("%s: %s, compute capability %d.%d, %d SMs\n", nv.name().c_str(), nv.info().name.c_str(),
                nv.info().major, nv.info().minor, nv.info().multiprocessors);
    std::printf("device-to-device copy: %.1f GB/s (1 GiB read and written, best of 10)\n",
                2.0 * double(bytes) / (double(best_ms) * 1e-3) / 1e9);
    cu.cuEventDestroy(start);
    cu.cuEventDestroy(end);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nv_bandwidth: %s\n", e.what());
    return 1;
  }
  return 0;
}
