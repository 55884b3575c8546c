// thread_pool.hpp: persistent worker threads for splitting a kernel's outer loop.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tg::cpu {

class thread_pool {
 public:
  explicit thread_pool(int threads);
  ~thread_pool();
  int size() const { return int(workers_.size()) + 1; }
  // Calls fn(i) for i in [0, n) across the workers and the calling thread; returns when
  // all are done. The first exception thrown is rethrown here.
  void parallel_for(int n, const std::function<void(int)>& fn);

 private:
  void work();
  std::vector<std::thread> workers_;
  std::mutex lock_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int next_ = 0, count_ = 0, finished_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace tg::cpu
