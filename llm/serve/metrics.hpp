// metrics.hpp: the server's counters, and /metrics as Prometheus text exposition format
// (prometheus.io/docs/instrumenting/exposition_formats; names after llama.cpp server's
// llamacpp:prompt_tokens_total, tokens_predicted_total, requests_processing, requests_deferred).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

namespace tg::serve {

struct metrics {
  std::atomic<std::uint64_t> requests_total{0};      // answered by a generation endpoint, any outcome
  std::atomic<std::uint64_t> requests_rejected{0};   // refused because the queue was full
  std::atomic<std::uint64_t> requests_cancelled{0};  // the client left before the end
  std::atomic<std::uint64_t> prompt_tokens{0}, cached_tokens{0}, generated_tokens{0};
  std::atomic<std::uint64_t> prompt_microseconds{0}, decode_microseconds{0};
  std::atomic<std::int64_t> queue_depth{0}, processing{0};
  std::atomic<std::int64_t> most_processing{0};  // the most requests generated at once since the start

  // One more request being generated (processing), keeping most_processing.
  void start_processing() {
    const std::int64_t now = ++processing;
    for (std::int64_t most = most_processing; now > most && !most_processing.compare_exchange_weak(most, now);) {}
  }
};

std::string render_prometheus(const metrics& m);

}  // namespace tg::serve
