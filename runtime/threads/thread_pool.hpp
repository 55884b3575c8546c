// thread_pool.hpp: persistent worker threads for splitting work: a CPU kernel's outer loop, the
// emulated GPU's workgroups (drivers/emu/shader/interpreter.cpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tg::threads {

// Threads to use when nobody said: $TG_THREADS, else one per hardware thread (at least 1).
int default_thread_count();

class thread_pool {
 public:
  explicit thread_pool(int threads);
  ~thread_pool();
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  int size() const { return int(workers_.size()) + 1; }
  // Calls fn(i) for i in [0, n) across the workers and the calling thread; returns when
  // all are done. The first exception thrown is rethrown here. Calls from several threads
  // take turns; fn must not call parallel_for itself.
  template <class Fn>
  void parallel_for(int n, const Fn& fn) {
    run(n, [](const void* f, int i) { (*static_cast<const Fn*>(f))(i); }, &fn);
  }

 private:
  using job_fn = void (*)(const void* context, int index);
  void run(int n, job_fn fn, const void* context);
  void work();
  bool take_and_run(std::uint32_t gen);

  std::vector<std::thread> workers_;
  // The job word: generation (high 32 bits), index count (16) and next index (16), so a
  // worker claims an index of the job it read and never one of the next job.
  std::atomic<std::uint64_t> job_{0};
  job_fn fn_ = nullptr;
  const void* context_ = nullptr;
  std::atomic<int> finished_{0};
  // Workers sleep on `epoch_` after spinning; the caller sleeps on `finished_`.
  std::atomic<std::uint32_t> epoch_{0};
  std::atomic<int> sleeping_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
  std::mutex caller_lock_, error_lock_;
  std::exception_ptr error_;
};

}  // namespace tg::threads
