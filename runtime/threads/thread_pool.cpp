// thread_pool.cpp: a job is a word holding its generation, index count and next index;
// workers claim the next index with a compare-and-swap until none are left. Between jobs
// workers spin briefly, then sleep, so back-to-back kernel launches skip a futex wake.
#include "runtime/threads/thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tg::threads {
namespace {

// How long an idle worker (or a caller waiting for the last index) polls before it sleeps.
// A futex wake costs 5-50 us; a forward pass launches its next parallel kernel well within
// this, while an idle process burns at most this much per thread after its last launch.
constexpr auto spin_time = std::chrono::microseconds(100);

constexpr std::uint64_t max_batch = 0xFFFF;  // indices one job word can count

constexpr std::uint32_t generation(std::uint64_t job) { return std::uint32_t(job >> 32); }
constexpr int count(std::uint64_t job) { return int(job >> 16 & 0xFFFF); }
constexpr int next(std::uint64_t job) { return int(job & 0xFFFF); }

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Polls `done` for up to spin_time; true when it became true.
template <class Done>
bool spin_until(const Done& done) {
  auto deadline = std::chrono::steady_clock::time_point::max();
  for (unsigned i = 0;; ++i) {
    if (done()) return true;
    relax();
    if ((i & 63) != 63) continue;
    auto now = std::chrono::steady_clock::now();
    if (deadline == std::chrono::steady_clock::time_point::max()) deadline = now + spin_time;
    else if (now > deadline) return false;
  }
}

}  // namespace

int default_thread_count() {
  if (const char* v = std::getenv("TG_THREADS")) return std::max(1, std::atoi(v));
  return std::max(1, int(std::thread::hardware_concurrency()));
}

thread_pool::thread_pool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

thread_pool::~thread_pool() {
  stop_.store(true);
  epoch_.fetch_add(1);
  epoch_.notify_all();
  for (auto& t : workers_) t.join();
}

void thread_pool::run(int n, job_fn fn, const void* context) {
  if (n <= 1 || workers_.empty()) {
    for (int i = 0; i < n; ++i) fn(context, i);
    return;
  }
  if (std::uint64_t(n) > max_batch) {  // more indices than a job word counts: in batches
    struct batch { job_fn fn; const void* context; int first; };
    for (int first = 0; first < n; first += int(max_batch)) {
      batch b{fn, context, first};
      run(std::min(n - first, int(max_batch)), [](const void* c, int i) {
        const auto& b = *static_cast<const batch*>(c);
        b.fn(b.context, b.first + i);
      }, &b);
    }
    return;
  }
  std::lock_guard<std::mutex> one_job(caller_lock_);  // callers on other threads take turns
  fn_ = fn;
  context_ = context;
  finished_.store(0, std::memory_order_relaxed);
  const std::uint32_t gen = generation(job_.load(std::memory_order_relaxed)) + 1;
  job_.store(std::uint64_t(gen) << 32 | std::uint64_t(n) << 16, std::memory_order_release);
  epoch_.fetch_add(1);
  if (sleeping_.load() > 0) epoch_.notify_all();
  while (take_and_run(gen)) {}  // the caller works too
  if (!spin_until([&] { return finished_.load(std::memory_order_acquire) == n; })) {
    caller_sleeping_.store(true);
    for (int f = finished_.load(); f != n; f = finished_.load()) finished_.wait(f);
    caller_sleeping_.store(false);
  }
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> g(error_lock_);
    std::swap(error, error_);
  }
  if (error) std::rethrow_exception(error);
}

// Claims and runs one index of job `gen`; false when the job has none left (or has ended).
bool thread_pool::take_and_run(std::uint32_t gen) {
  std::uint64_t job = job_.load(std::memory_order_acquire);
  do {
    if (generation(job) != gen || next(job) >= count(job)) return false;
  } while (!job_.compare_exchange_weak(job, job + 1, std::memory_order_acq_rel, std::memory_order_acquire));
  // The job cannot end before this index finishes, so fn_ and context_ are still its own.
  try {
    fn_(context_, next(job));
  } catch (...) {
    std::lock_guard<std::mutex> g(error_lock_);
    if (!error_) error_ = std::current_exception();
  }
  if (finished_.fetch_add(1) + 1 == count(job) && caller_sleeping_.load()) finished_.notify_one();
  return true;
}

void thread_pool::work() {
  std::uint32_t seen = 0;
  while (true) {
    if (!spin_until([&] { return epoch_.load(std::memory_order_acquire) != seen; })) {
      sleeping_.fetch_add(1);
      while (epoch_.load() == seen) epoch_.wait(seen);
      sleeping_.fetch_sub(1);
    }
    seen = epoch_.load();
    if (stop_.load()) return;
    const std::uint32_t gen = generation(job_.load(std::memory_order_acquire));
    while (take_and_run(gen)) {}
  }
}

}  // namespace tg::threads
