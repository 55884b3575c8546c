// job.hpp: one request between the HTTP thread that answers it and the engine thread that
// generates it. The engine appends text and finally finishes the job; the HTTP thread waits
// for either with a timeout (so it can poll the socket for a client that left) and may
// cancel, which the engine notices between forward passes.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "llm/serve/generation_request.hpp"

namespace tg::serve {

enum class finish_reason {
  none,       // still running
  stop,       // an end-of-generation token or a stop sequence
  length,     // max_tokens or the end of the context
  cancelled,  // the client left
  shutdown,   // the server is stopping
  error,      // the engine failed (message in job_update::error)
};

struct job_stats {
  std::int64_t prompt_tokens = 0, cached_tokens = 0, completion_tokens = 0;
  double queued_seconds = 0, prompt_seconds = 0, decode_seconds = 0;
};

struct job_update {
  std::string text;  // new answer text since the last update: whole UTF-8 characters
  finish_reason finished = finish_reason::none;
  job_stats stats;   // final when finished
  std::string error;
};

class job {
 public:
  explicit job(generation_request r) : request(std::move(r)), created_(std::chrono::steady_clock::now()) {}

  const generation_request request;

  // Engine side.
  void append(std::string_view text) {
    if (text.empty()) return;
    {
      std::lock_guard lock(mutex_);
      pending_ += text;
    }
    changed_.notify_all();
  }
  void finish(finish_reason reason, const job_stats& stats, std::string error = {}) {
    {
      std::lock_guard lock(mutex_);
      finished_ = reason;
      stats_ = stats;
      error_ = std::move(error);
    }
    changed_.notify_all();
  }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
  std::chrono::steady_clock::time_point created() const { return created_; }

  // HTTP side: returns as soon as there is text or the job ended, else after `timeout`.
  job_update wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return !pending_.empty() || finished_ != finish_reason::none; });
    job_update u{std::move(pending_), finished_, stats_, error_};
    pending_.clear();
    return u;
  }
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string pending_;
  finish_reason finished_ = finish_reason::none;
  job_stats stats_;
  std::string error_;
  std::atomic<bool> cancelled_{false};
  std::chrono::steady_clock::time_point created_;
};

}  // namespace tg::serve
