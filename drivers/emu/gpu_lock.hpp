// gpu_lock.hpp: gpu::lock, the scoped lock every public gpu member takes; private to the gpu's
// own .cpp files (gpu.cpp, gpu_boot.cpp).
//
// It refuses the thread that is executing queues: that is a callback the gpu runs (a dispatch
// observer) calling back into the gpu, which would deadlock.
#pragma once
#include <thread>

#include "drivers/emu/gpu.hpp"
#include <tg/core/error.hpp>

namespace tg::emu {

// Takes the gpu's lock, refusing a thread that is executing queues: that is a dispatch observer
// calling back into the gpu, which would deadlock.
class gpu::lock {
 public:
  explicit lock(const gpu& g) : g_(g) {
    if (g.executing_thread_.load() == std::this_thread::get_id())
      throw usage_error("emu: a dispatch observer called back into the gpu; it may only read what it is given");
    g.mutex_.lock();
  }
  ~lock() { g_.mutex_.unlock(); }
  lock(const lock&) = delete;
  lock& operator=(const lock&) = delete;

 private:
  const gpu& g_;
};

}  // namespace tg::emu
