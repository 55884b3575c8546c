// thread_pool.cpp: a job is a counter of indices; workers take the next index until none
// are left.
#include "thread_pool.hpp"

namespace tg::cpu {

thread_pool::thread_pool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

thread_pool::~thread_pool() {
  {
    std::lock_guard<std::mutex> g(lock_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void thread_pool::parallel_for(int n, const std::function<void(int)>& fn) {
  if (n <= 1 || workers_.empty()) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  std::unique_lock<std::mutex> g(lock_);
  job_ = &fn;
  next_ = 0;
  count_ = n;
  finished_ = 0;
  error_ = nullptr;
  ++generation_;
  wake_.notify_all();
  while (next_ < count_) {  // the caller works too
    int i = next_++;
    g.unlock();
    try { fn(i); } catch (...) { std::lock_guard<std::mutex> e(lock_); if (!error_) error_ = std::current_exception(); }
    g.lock();
    ++finished_;
  }
  done_.wait(g, [this] { return finished_ == count_; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

void thread_pool::work() {
  std::uint64_t seen = 0;
  std::unique_lock<std::mutex> g(lock_);
  while (true) {
    wake_.wait(g, [&] { return stop_ || (generation_ != seen && job_ && next_ < count_); });
    if (stop_) return;
    seen = generation_;
    while (job_ && next_ < count_) {
      int i = next_++;
      const auto* fn = job_;
      g.unlock();
      try { (*fn)(i); } catch (...) { std::lock_guard<std::mutex> e(lock_); if (!error_) error_ = std::current_exception(); }
      g.lock();
      if (++finished_ == count_) done_.notify_all();
    }
  }
}

}  // namespace tg::cpu
