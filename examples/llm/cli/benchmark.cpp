// benchmark.cpp: decode timing per token and the prefill / decode summary.
#include "examples/llm/cli/benchmark.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <cstdio>
#include <string>
#include <vector>

#include <tg/llm/model.hpp>
#include <tg/log.hpp>
#include "llm/model/session.hpp"
#include "llm/model/transformer.hpp"

namespace tg::cli {
namespace {

using clock = std::chrono::steady_clock;

double seconds(clock::time_point a, clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

std::string escaped(const std::string& text) {
  std::string s;
  for (char c : text) s += c == '\n' ? std::string("\\n") : std::string(1, c);
  return s;
}

std::int32_t argmax(const std::vector<float>& v) {
  return std::int32_t(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

void log_profile(const char* phase, const model::transformer& model) {
  std::string report = model.profile_report();
  while (!report.empty() && report.back() == '\n') report.pop_back();
  log(log_level::info, std::string(phase) + " kernel time by kernel:\n" + report);
}

// The first prompt after warm-up, longer than one chunk and not a multiple of the token tile
// (so it takes a full chunk, a tiled remainder and a ragged tail): its time to the first token,
// and the kernels compiled meanwhile, which warm-up should have left at none.
void first_prompt(const llm::model& m, std::ostream& out) {
  model::transformer& model = m.transformer();
  const std::int64_t n = std::min<std::int64_t>(model.chunk_size() + model.chunk_size() / 2 + 1, model.max_context() - 1);
  std::vector<std::int32_t> prompt;
  for (std::int64_t i = 0; i < n; ++i) prompt.push_back(std::int32_t((300 + 7 * i) % model.config().vocab));
  model::session s(model);
  const int compiled = m.device().stats().compiled;
  const auto start = clock::now();
  const std::vector<float> logits = s.prefill(prompt);
  argmax(logits);
  const double ttft = seconds(start, clock::now());
  char line[200];
  std::snprintf(line, sizeof line, "first prompt after warm-up: %lld tokens, time to first token %.3f s, %d kernels compiled for it\n",
                static_cast<long long>(n), ttft, m.device().stats().compiled - compiled);
  out << line << std::flush;
}

void run_benchmark(const llm::model& m, int count, std::ostream& out) {
  model::transformer& model = m.transformer();
  const bool profiling = model.profiling();
  model.set_profiling(false);
  first_prompt(m, out);
  model.set_profiling(profiling);
  model::session s(model);
  std::vector<std::int32_t> text = {m.bos().value_or(0)};
  const double device_mb = double(model.weight_bytes_per_token() + model.kv_cache_bytes()) / 1e6;
  auto t0 = clock::now();
  std::vector<float> logits = s.prefill(text);
  double decode_total = 0;
  int decoded = 0;
  const backend& impl = m.device().impl();
  std::optional<link_counts> link_before;  // at the first decode step
  for (int i = 0; i < count && s.position() < model.max_context(); ++i) {
    if (i == 1) link_before = impl.link_traffic();
    auto start = clock::now();
    if (i > 0) logits = s.decode(text.back());
    text.push_back(argmax(logits));
    double sec = seconds(i == 0 ? t0 : start, clock::now());
    if (i > 0) {
      decode_total += sec;
      ++decoded;
    }
    double bytes = double(model.weight_bytes_per_token() + model.kv_bytes_read(s.position()));
    char line[160];
    std::snprintf(line, sizeof line, "%6.2f ms, %6.2f tok/s, %7.2f GB/s, %d/%d MB  --  ", sec * 1e3, 1.0 / sec,
                  bytes / sec / 1e9, int(bytes / 1e6), int(device_mb));
    out << line << escaped(m.detokenize(text, true)) << "\n" << std::flush;
  }
  const std::optional<link_counts> link_after = impl.link_traffic();
  if (model.profiling()) {  // each phase's kernels on their own: decode and prefill have different kernels and costs
    log_profile("decode", model);
    model.set_profiling(true);
  }
  // Prefill: a synthetic prompt as in tinygrad's benchmark_llm.py (token 257, then 1000 + i).
  const std::int64_t n = std::min<std::int64_t>(256, model.max_context() - 1);
  std::vector<std::int32_t> prompt;
  for (std::int64_t i = 0; i < n; ++i)
    prompt.push_back(std::int32_t(i == 0 ? 257 : 1000 + (i - 1) % 1000) % std::int32_t(model.config().vocab));
  s.reset();
  const std::optional<link_counts> prefill_before = impl.link_traffic();
  auto start = clock::now();
  s.prefill(prompt);
  double prefill = seconds(start, clock::now());
  const std::optional<link_counts> prefill_after = impl.link_traffic();
  if (model.profiling()) {
    log_profile("prefill", model);
    model.set_profiling(true);
  }
  char summary[200];
  std::snprintf(summary, sizeof summary, "prefill %.2f tok/s (%lld tokens in chunks of %lld), decode %.2f tok/s (%d tokens)\n",
                double(n) / prefill, static_cast<long long>(n), static_cast<long long>(model.chunk_size()),
                decoded > 0 ? decoded / decode_total : 0.0, decoded);
  out << summary;
  // Behind the USB bridge every transfer is a round trip: how many a token took (issue 14: one
  // submission per token is what keeps this small).
  if (link_before && link_after && prefill_before && prefill_after && decoded > 0) {
    const double per_token = double(link_after->transfers - link_before->transfers) / decoded;
    const double kib = double(link_after->bytes_out - link_before->bytes_out + link_after->bytes_in - link_before->bytes_in) /
                       1024.0 / decoded;
    const double polls = double(link_after->waiting - link_before->waiting) / decoded;
    std::snprintf(summary, sizeof summary,
                  "bridge: %.1f USB transfers (%.1f KiB) per decode token%s, %.1f of them polls while the GPU worked; "
                  "%.1f per prefill token\n",
                  per_token, kib, model.graphs() && !model.profiling() ? " replaying its graph" : " launching kernel by kernel",
                  polls, double(prefill_after->transfers - prefill_before->transfers) / double(n));
    out << summary;
  }
}

}  // namespace tg::cli
