// context_bench.cpp: decode tokens/s of the Llama-3.2-1B-shaped Q8_0 model at context 128,
// 1024 and 4096, for each KV-cache type, with the KV bytes one token reads and how long those
// bytes take at the memory read bandwidth measured in the same run.
//
//   context_bench build/models/bench-llama3.2-1b-Q8_0.gguf   # llm_bench synthesizes that file
//   context_bench FILE -v    # also the time of each kernel at the longest context (stderr)
//
// A step at context c decodes one token at position c - 1. Attention's cost does not depend on
// what the cache holds, so the cache is not filled by a 4096-token prefill (minutes on two
// cores): its rows before c - 1 are the zeros the transformer starts with (written, so they
// are real pages, not the kernel's shared zero page).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llm/gguf/gguf_file.hpp"
#include "llm/model/session.hpp"
#include "tests/bench/memory_bandwidth.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
constexpr unsigned threads = 2;
constexpr std::int64_t contexts[] = {128, 1024, 4096};
constexpr int rounds = 12, steps_per_round = 2;
struct figures {
  double tps[std::size(contexts)];
  std::uint64_t kv_bytes[std::size(contexts)];
  std::uint64_t weight_bytes;
  tg::model::kv_cache_type cache;  // as the model resolved it
};

// The fastest of rounds x steps_per_round decode steps at each context, the contexts taken in
// turn each round: other tenants of a shared machine only ever slow a step down, and a slow
// spell then hits every context alike instead of one.
figures measure(const tg::gguf::file& file, tg::model::kv_cache_type cache, bool profile) {
  const int steps = rounds * steps_per_round;
  tg::device dev("CPU");
  tg::model::transformer model(dev, file, {.max_context = contexts[std::size(contexts) - 1] + steps, .chunk_size = 32,
                                           .cache = cache});
  tg::model::warm_up(model);
  figures f{};
  f.weight_bytes = model.weight_bytes_per_token();
  f.cache = model.cache_type();
  std::vector<double> best(std::size(contexts), 1e30);
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < std::size(contexts); ++i)
      for (int k = 0; k < steps_per_round; ++k) {
        const int step = r * steps_per_round + k;
        const std::int32_t token = 1000 + step;
        auto t0 = clock_type::now();
        model.forward(std::span(&token, 1), contexts[i] - 1 + step, tg::model::head::last);
        best[i] = std::min(best[i], std::chrono::duration<double>(clock_type::now() - t0).count());
      }
  for (std::size_t i = 0; i < std::size(contexts); ++i) {
    f.tps[i] = 1.0 / best[i];
    f.kv_bytes[i] = model.kv_bytes_read(contexts[i]);
  }
  if (profile) {  // after the timed steps: profiling synchronizes after every launch
    model.set_profiling(true);
    const std::int64_t at = contexts[std::size(contexts) - 1] - 1;
    for (int k = 0; k < 4; ++k) model.forward(std::span(&k, 1), at + k, tg::model::head::last);
    std::fprintf(stderr, "cache %s, 4 steps at context %lld:\n%s", tg::model::kv_cache_type_name(model.cache_type()),
                 static_cast<long long>(at + 1), model.profile_report().c_str());
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("TG_THREADS", std::to_string(threads).c_str(), 1);  // before the first device: read once
  const std::string path = argc > 1 ? argv[1] : "models/bench-llama3.2-1b-Q8_0.gguf";
  const bool profile = argc > 2 && std::string(argv[2]) == "-v";
  try {
    auto file = tg::gguf::file::open(path);
    const double bandwidth_before = tg::bench::measure_read_bandwidth({.threads = threads});
    const tg::model::kv_cache_type types[] = {tg::model::kv_cache_type::f32, tg::model::kv_cache_type::f16};
    std::vector<figures> results;
    for (auto type : types) results.push_back(measure(file, type, profile));
    const double gbps = std::max(bandwidth_before, tg::bench::measure_read_bandwidth({.threads = threads}));
    const double bandwidth = gbps * 1e9;  // bytes per second
    std::printf("%s, %u threads; memory read bandwidth %.2f GB/s (best of before and after)\n", path.c_str(), threads,
                gbps);
    for (std::size_t t = 0; t < results.size(); ++t) {
      const figures& f = results[t];
      const char* name = tg::model::kv_cache_type_name(f.cache);
      for (std::size_t i = 0; i < std::size(contexts); ++i) {
        // The time the whole token's bytes take at the bandwidth, and the KV bytes' share of it.
        const double kv_ms = double(f.kv_bytes[i]) / bandwidth * 1e3;
        const double floor_ms = double(f.weight_bytes + f.kv_bytes[i]) / bandwidth * 1e3;
        std::printf("cache %s  context %5lld  decode %6.2f tok/s (best step %6.1f ms)  KV read %6.1f MB/token = %5.2f ms "
                    "at bandwidth  (weights + KV at bandwidth: %6.1f ms)\n",
                    name, static_cast<long long>(contexts[i]), f.tps[i], 1e3 / f.tps[i], double(f.kv_bytes[i]) / 1e6,
                    kv_ms, floor_ms);
      }
      // The time per token beyond context 128, against the extra KV bytes at the bandwidth.
      const double extra_ms = 1e3 / f.tps[std::size(contexts) - 1] - 1e3 / f.tps[0];
      const double extra_kv_ms = double(f.kv_bytes[std::size(contexts) - 1] - f.kv_bytes[0]) / bandwidth * 1e3;
      std::printf("cache %s  decode 4096 / 128 = %.3f (goal >= 0.75); 4096 costs %.1f ms more per token than 128, "
                  "its extra KV bytes %.1f ms at bandwidth\n",
                  name, f.tps[std::size(contexts) - 1] / f.tps[0], extra_ms, extra_kv_ms);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "context_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
