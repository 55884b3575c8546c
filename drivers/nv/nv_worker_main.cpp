// nv_worker_main.cpp: tg-nv-worker, the process in which BEAM runs candidate kernels for an NVIDIA
// GPU (nv_candidate_runner.hpp). Started by the runner, not by users:
//
//   tg-nv-worker <socket fd> <GPU ordinal>
//
// Why a process of its own: a kernel that faults (an illegal address, an illegal instruction, a
// failed launch) "leaves the process in an inconsistent state and any further CUDA work will
// return the same error. To continue using CUDA, the process must be terminated and relaunched"
// (CUDA Driver API, CUresult: CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED). Here that
// process is the worker, so the user's, with the model's weights and its graphs, lives on: the
// worker reports the fault and exits, and the runner starts another. A kernel that never ends is
// ended by the runner killing the worker; the driver then tears down the worker's context and the
// work in it. A child of fork() alone would not do: CUDA does not support a forked child using it
// once the parent has initialized it, hence a program of its own, started with posix_spawn.
//
// It is one thread serving one request at a time (nv_worker_protocol.hpp). The stand-in buffers
// stay allocated between candidates; before each candidate's first run the slots it writes get
// their input bytes again, so every candidate starts from the same data.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "drivers/nv/cuda_driver.hpp"
#include "drivers/nv/nv_worker_protocol.hpp"

namespace {

using namespace tg::nv;
namespace w = tg::nv::worker;

// A CUDA call that failed: faulted (the context may be lost) or refused (it is not).
struct cuda_failure : std::runtime_error {
  cuda_failure(std::string what, bool fault) : std::runtime_error(std::move(what)), fault(fault) {}
  bool fault;
};

struct slot {
  std::vector<std::byte> input;
  bool written = false;
  CUdeviceptr device = 0;
};

class worker_gpu {
 public:
  explicit worker_gpu(int ordinal) : cu_(cuda_driver::load()) {
    check(cu_, cu_.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
    char name[256] = {};
    check(cu_, cu_.cuDeviceGetName(name, sizeof name - 1, device_), "cuDeviceGetName");
    name_ = name;
    check(cu_, cu_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    check(cu_, cu_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
    check(cu_, cu_.cuStreamCreate(&stream_, 0), "cuStreamCreate");
    check(cu_, cu_.cuEventCreate(&start_, 0), "cuEventCreate");
    check(cu_, cu_.cuEventCreate(&stop_, 0), "cuEventCreate");
  }
  const std::string& name() const { return name_; }

  void set_slots(w::message_reader in) {
    free_slots();
    const std::uint32_t n = in.u32();
    slots_.resize(n);
    for (slot& s : slots_) {
      const std::uint64_t size = in.u64();
      s.written = in.u8() != 0;
      const std::span<const std::byte> bytes = in.bytes();
      if (bytes.size() != size) throw std::runtime_error("set_slots: a slot's bytes are not its size");
      s.input.assign(bytes.begin(), bytes.end());
      // At least 16 bytes: the kernels' loads assume 16-byte aligned, 16-byte padded buffers.
      call(cu_.cuMemAlloc(&s.device, std::max<std::size_t>(size, 16)), "cuMemAlloc", false);
      call(cu_.cuMemcpyHtoDAsync(s.device, s.input.data(), s.input.size(), stream_), "cuMemcpyHtoDAsync", true);
    }
    call(cu_.cuStreamSynchronize(stream_), "cuStreamSynchronize", true);
  }

  // The candidate's written slots after its first run, and the fastest of `timed` more runs.
  w::message_writer run(w::message_reader in) {
    const std::string ptx = in.text(), entry = in.text();
    const std::uint64_t blocks = in.u64();
    const std::uint32_t block_size = in.u32();
    std::vector<std::uint64_t> values(in.u32());
    for (std::uint64_t& v : values) {
      const bool is_slot = in.u8() != 0;
      v = in.u64();
      if (is_slot) {
        if (v >= slots_.size()) throw std::runtime_error("run: a parameter names a slot the worker does not hold");
        v = slots_[std::size_t(v)].device;
      }
    }
    const std::uint32_t timed = in.u32();
    std::vector<void*> params;
    for (std::uint64_t& v : values) params.push_back(&v);

    CUmodule module = load(ptx);
    struct unload_at_end {
      const cuda_driver& cu;
      CUmodule m;
      ~unload_at_end() { cu.cuModuleUnload(m); }
    } unload{cu_, module};
    CUfunction f = nullptr;
    call(cu_.cuModuleGetFunction(&f, module, entry.c_str()), "cuModuleGetFunction", false);

    for (const slot& s : slots_)
      if (s.written) call(cu_.cuMemcpyHtoDAsync(s.device, s.input.data(), s.input.size(), stream_), "cuMemcpyHtoDAsync", true);
    auto launch = [&] {
      if (blocks == 0) return;  // an empty output
      const CUresult r = cu_.cuLaunchKernel(f, unsigned(blocks), 1, 1, block_size, 1, 1, 0, stream_, params.data(), nullptr);
      if (r == cuda_success) return;
      // A launch the driver refuses (too many registers for the block, say) leaves the context
      // as it was; an earlier fault surfacing here does not, and the stream says which.
      const CUresult after = cu_.cuStreamSynchronize(stream_);
      if (after != cuda_success) throw cuda_failure(describe(cu_, after, "cuStreamSynchronize"), true);
      throw cuda_failure(describe(cu_, r, "cuLaunchKernel"), false);
    };
    launch();
    call(cu_.cuStreamSynchronize(stream_), "cuStreamSynchronize", true);

    w::message_writer out;
    std::vector<std::byte> host;
    w::message_writer outputs;
    std::uint32_t written = 0;
    for (std::size_t k = 0; k < slots_.size(); ++k) {
      if (!slots_[k].written) continue;
      host.resize(slots_[k].input.size());
      call(cu_.cuMemcpyDtoHAsync(host.data(), slots_[k].device, host.size(), stream_), "cuMemcpyDtoHAsync", true);
      call(cu_.cuStreamSynchronize(stream_), "cuStreamSynchronize", true);
      outputs.u32(std::uint32_t(k)).bytes(host);
      ++written;
    }
    double best = blocks == 0 ? 0 : std::numeric_limits<double>::infinity();
    for (std::uint32_t i = 0; i < timed && blocks != 0; ++i) {
      call(cu_.cuEventRecord(start_, stream_), "cuEventRecord", true);
      launch();
      call(cu_.cuEventRecord(stop_, stream_), "cuEventRecord", true);
      call(cu_.cuEventSynchronize(stop_), "cuEventSynchronize", true);
      float ms = 0;
      call(cu_.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime", true);
      best = std::min(best, double(ms) * 1e-3);
    }
    out.f64(best).u32(written);
    out.data.insert(out.data.end(), outputs.data.begin(), outputs.data.end());
    return out;
  }

 private:
  void call(CUresult r, const char* what, bool fault) {
    if (r != cuda_success) throw cuda_failure(describe(cu_, r, what), fault);
  }

  CUmodule load(const std::string& ptx) {
    char errors[8192] = {};
    int keys[] = {jit_error_log_buffer, jit_error_log_buffer_size_bytes};
    void* values[] = {errors, reinterpret_cast<void*>(std::uintptr_t(sizeof errors))};
    CUmodule module = nullptr;
    if (const CUresult r = cu_.cuModuleLoadDataEx(&module, ptx.c_str(), 2, keys, values); r != cuda_success)
      throw cuda_failure(describe(cu_, r, "cuModuleLoadDataEx") + ": " + errors, false);
    return module;
  }

  void free_slots() {
    for (slot& s : slots_)
      if (s.device) cu_.cuMemFree(s.device);
    slots_.clear();
  }

  const cuda_driver& cu_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
  std::string name_;
  std::vector<slot> slots_;
};

bool reply(int fd, w::kind of, const std::string& text) {
  w::message_writer m;
  m.text(text);
  return w::send_message(fd, of, m.data, std::nullopt);
}

// Requests until the runner closes the socket (0), or the context is lost (2).
int serve(int fd, worker_gpu& gpu) {
  w::message request;
  for (;;) {
    if (w::receive_message(fd, request, std::nullopt) != w::received::ok) return 0;
    try {
      if (request.of == w::kind::set_slots) {
        gpu.set_slots(w::message_reader(request.payload));
        w::send_message(fd, w::kind::slots_ready, {}, std::nullopt);
      } else if (request.of == w::kind::run) {
        const w::message_writer answer = gpu.run(w::message_reader(request.payload));
        w::send_message(fd, w::kind::ran, answer.data, std::nullopt);
      } else {
        reply(fd, w::kind::failed, "unknown request " + std::to_string(std::uint32_t(request.of)));
        return 2;
      }
    } catch (const cuda_failure& e) {
      reply(fd, e.fault ? w::kind::faulted : w::kind::refused, e.what());
      if (e.fault) return 2;
    } catch (const std::exception& e) {  // out of memory, a malformed request
      reply(fd, w::kind::failed, e.what());
      return 2;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "tg-nv-worker: started by tg's BEAM search for NV devices, not by hand\n"
                         "usage: tg-nv-worker <socket fd> <GPU ordinal>\n");
    return 64;
  }
  const int fd = std::atoi(argv[1]), ordinal = std::atoi(argv[2]);
  signal(SIGPIPE, SIG_IGN);
  try {
    worker_gpu gpu(ordinal);
    if (!reply(fd, w::kind::ready, gpu.name())) return 1;
    return serve(fd, gpu);
  } catch (const std::exception& e) {
    reply(fd, w::kind::failed, e.what());
    return 1;
  }
}
