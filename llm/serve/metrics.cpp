// metrics.cpp: /metrics in Prometheus text format.
#include "llm/serve/metrics.hpp"

#include <sstream>

namespace tg::serve {
namespace {

void put(std::ostringstream& out, const char* name, const char* type, const char* help, double value) {
  out << "# HELP tg_" << name << ' ' << help << "\n# TYPE tg_" << name << ' ' << type << "\ntg_" << name << ' ' << value << '\n';
}

double rate(std::uint64_t tokens, std::uint64_t microseconds) {
  return microseconds == 0 ? 0.0 : double(tokens) / (double(microseconds) * 1e-6);
}

}  // namespace

std::string render_prometheus(const metrics& m) {
  std::ostringstream out;
  out.precision(10);
  const std::uint64_t prompt = m.prompt_tokens, generated = m.generated_tokens;
  const std::uint64_t prompt_us = m.prompt_microseconds, decode_us = m.decode_microseconds;
  put(out, "requests_total", "counter", "Generation requests answered.", double(m.requests_total));
  put(out, "requests_rejected_total", "counter", "Requests refused with 503 because the queue was full.", double(m.requests_rejected));
  put(out, "requests_cancelled_total", "counter", "Requests whose client disconnected before the end.", double(m.requests_cancelled));
  put(out, "prompt_tokens_total", "counter", "Prompt tokens, computed or reused from the cache.", double(prompt));
  put(out, "prompt_tokens_cached_total", "counter", "Prompt tokens reused from the KV cache.", double(m.cached_tokens));
  put(out, "tokens_predicted_total", "counter", "Generated tokens.", double(generated));
  put(out, "prompt_seconds_total", "counter", "Time spent in prefill.", double(prompt_us) * 1e-6);
  put(out, "decode_seconds_total", "counter", "Time spent generating.", double(decode_us) * 1e-6);
  put(out, "prompt_tokens_seconds", "gauge", "Average prefill throughput in tokens/s.",
      rate(prompt - m.cached_tokens, prompt_us));
  put(out, "predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.", rate(generated, decode_us));
  put(out, "requests_processing", "gauge", "Requests being generated now.", double(m.processing));
  put(out, "requests_processing_max", "gauge", "The most requests generated at once since the start.",
      double(m.most_processing));
  put(out, "requests_deferred", "gauge", "Requests waiting in the queue.", double(m.queue_depth));
  return out.str();
}

}  // namespace tg::serve
