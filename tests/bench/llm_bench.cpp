// llm_bench.cpp: prefill and decode tokens/s of synthetic Llama-3.2-1B- and Qwen2.5-0.5B-shaped
// models in Q8_0 and Q4_K_M, with decode GB/s as a fraction of the memory read bandwidth
// measured in the same run (decode reads every weight once per token, so that is its ceiling),
// and decode again with each step replaying a captured graph instead of launching kernel by kernel.
//
//   llm_bench build/models     # synthesizes build/models/bench-*.gguf on the first run
//   LLAMA_BENCH=/path/to/llama-bench llm_bench build/models
//                              # also runs llama.cpp's llama-bench on each file, right after tg's
//                              # run of it (same threads, prompt and generation lengths), and
//                              # prints tg / llama.cpp
//   LLM_BENCH_ONLY=1b-Q4_K_M llm_bench build/models
//                              # only the models whose name (preset-format) contains the text
//   LLM_BENCH_ROUNDS=3 LLAMA_BENCH=... llm_bench build/models
//                              # tg and llama-bench alternated 3 times on each file: the medians
//                              # and each round's ratios (a shared VM's memory speed swings by
//                              # up to 2x between runs; alternating puts both sides in each phase),
//                              # and each round's decode share against a probe of the bandwidth
//                              # right before it
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "llm/gguf/gguf_file.hpp"
#include "tests/bench/llama_bench_runner.hpp"
#include "tests/bench/memory_bandwidth.hpp"
#include "llm/model/session.hpp"
#include "llm/synth/model_presets.hpp"
#include "llm/synth/model_writer.hpp"
#include "llm/synth/vocabulary.hpp"

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

// llama.cpp's threads; the bandwidth probe uses as many.
constexpr unsigned threads = 2;
constexpr std::int64_t prompt_tokens = 128, chunk = 32, decode_tokens = 32;

struct bench_model {
  const char* preset;
  tg::synth::weight_format format;
};

const bench_model all_models[] = {
    {"llama3.2-1b", tg::synth::weight_format::q8_0},
    {"llama3.2-1b", tg::synth::weight_format::q4_k_m},
    {"qwen2.5-0.5b", tg::synth::weight_format::q8_0},
    {"qwen2.5-0.5b", tg::synth::weight_format::q4_k_m},
};

double seconds(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The cached file, written once: the byte-level vocabulary padded to the real model's size, so
// the tied output head has the real row count and its share of the bytes read per token.
fs::path synthesized(const fs::path& dir, const bench_model& m) {
  const std::string format(tg::synth::weight_format_name(m.format));
  const fs::path path = dir / ("bench-" + std::string(m.preset) + "-" + format + ".gguf");
  if (fs::exists(path)) return path;
  const auto* preset = tg::synth::find_preset(m.preset);
  tg::synth::model_spec spec = tg::synth::spec_from_preset(*preset);
  spec.format = m.format;
  tg::synth::vocabulary vocab = tg::synth::byte_level_vocabulary(spec.arch);
  tg::synth::pad_vocabulary(vocab, preset->vocab_size);
  fs::create_directories(dir);
  std::fprintf(stderr, "synthesizing %s ...", path.c_str());
  auto t0 = clock_type::now();
  tg::synth::write_model(spec, vocab, path);
  std::fprintf(stderr, " %.1f s\n", seconds(t0, clock_type::now()));
  return path;
}

struct result {
  double prefill_tps, decode_tps, decode_gbps;
  std::uint64_t bytes_per_token;
  std::vector<double> share_each_round{};  // decode GB/s over the bandwidth probed right before it
};

// "a%" (", a%" after the first) with one decimal.
std::string str_percent(double fraction, bool first) {
  char text[32];
  std::snprintf(text, sizeof text, "%s%.1f%%", first ? "" : ", ", 100.0 * fraction);
  return text;
}

// graphs: each decode step and full prefill chunk launches kernel by kernel (the CPU's default) or replays its captured graph.
result measure(const fs::path& path, tg::model::transformer_options::graph_use graphs =
                                         tg::model::transformer_options::graph_use::automatic) {
  auto file = tg::gguf::file::open(path);
  tg::device dev("CPU");
  tg::model::transformer model(dev, file, {.max_context = 512, .chunk_size = chunk, .graphs = graphs});
  tg::model::warm_up(model);
  const auto vocab = std::int32_t(model.config().vocab);
  // The prompt of llm --benchmark: token 257, then 1000 + i.
  std::vector<std::int32_t> prompt;
  for (std::int64_t i = 0; i < prompt_tokens; ++i) prompt.push_back(std::int32_t(i == 0 ? 257 : 1000 + i - 1) % vocab);
  tg::model::session s(model);
  std::vector<double> prefill;
  std::vector<float> logits;
  for (int r = 0; r < 3; ++r) {
    s.reset();
    auto t0 = clock_type::now();
    logits = s.prefill(prompt);
    prefill.push_back(seconds(t0, clock_type::now()));
  }
  // Greedy decode from the prompt; the median step ignores a stray slow one on a shared machine.
  std::vector<double> steps;
  std::uint64_t bytes = 0;
  for (std::int64_t i = 0; i < decode_tokens; ++i) {
    auto next = std::int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    auto t0 = clock_type::now();
    logits = s.decode(next);
    steps.push_back(seconds(t0, clock_type::now()));
    bytes = model.weight_bytes_per_token() + model.kv_bytes_read(s.position());
  }
  const double step = median(steps);
  return {double(prompt_tokens) / median(prefill), 1.0 / step, double(bytes) / step / 1e9, bytes};
}

}  // namespace

int main(int argc, char** argv) {
  // Set before the first device exists: the CPU backend reads it once.
  setenv("TG_THREADS", std::to_string(threads).c_str(), 1);
  const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::path("models");
  try {
    std::vector<bench_model> models;
    const char* only = std::getenv("LLM_BENCH_ONLY");
    std::string names;
    for (const auto& m : all_models) {
      const std::string name = std::string(m.preset) + "-" + std::string(tg::synth::weight_format_name(m.format));
      names += (names.empty() ? "" : ", ") + name;
      if (only == nullptr || name.find(only) != std::string::npos) models.push_back(m);
    }
    if (models.empty()) {
      std::fprintf(stderr, "llm_bench: LLM_BENCH_ONLY=%s matches none of the models (%s)\n", only, names.c_str());
      return 2;
    }
    std::vector<fs::path> paths;
    for (const auto& m : models) paths.push_back(synthesized(dir, m));
    const double bandwidth_before = tg::bench::measure_read_bandwidth({.threads = threads});
    const char* llama_bench = std::getenv("LLAMA_BENCH");
    const char* rounds_text = std::getenv("LLM_BENCH_ROUNDS");
    const int rounds = rounds_text ? std::atoi(rounds_text) : 1;
    if (rounds < 1 || rounds > 20) {
      std::fprintf(stderr, "llm_bench: LLM_BENCH_ROUNDS=%s: give a count from 1 to 20\n", rounds_text);
      return 2;
    }
    std::vector<result> results, graphed;
    std::vector<tg::bench::llama_bench_figures> llama;
    std::vector<std::string> round_ratios;  // per file, each round's tg / llama.cpp
    for (const auto& p : paths) {
      std::vector<result> tg_rounds;
      std::vector<tg::bench::llama_bench_figures> llama_rounds;
      std::vector<double> round_shares;  // decode GB/s over the probe right before the round
      std::string ratios;
      for (int r = 0; r < rounds; ++r) {
        std::fprintf(stderr, "running %s (round %d of %d)\n", p.filename().c_str(), r + 1, rounds);
        // The memory's speed right before the round: the VM's swings last longer than a round.
        const double probe = tg::bench::measure_read_bandwidth({.threads = threads});
        tg_rounds.push_back(measure(p));
        round_shares.push_back(tg_rounds.back().decode_gbps / probe);
        if (llama_bench && *llama_bench) {
          std::fprintf(stderr, "running llama-bench on %s\n", p.filename().c_str());
          llama_rounds.push_back(tg::bench::run_llama_bench(llama_bench, p, threads, prompt_tokens, decode_tokens));
          char text[64];
          std::snprintf(text, sizeof text, "%s%.2f/%.2f", r ? ", " : "", tg_rounds.back().prefill_tps / llama_rounds.back().prefill_tps,
                        tg_rounds.back().decode_tps / llama_rounds.back().decode_tps);
          ratios += text;
        }
      }
      auto mid = [](auto rows, auto field) {
        std::vector<double> v;
        for (const auto& row : rows) v.push_back(field(row));
        return median(v);
      };
      result r = tg_rounds.front();
      r.prefill_tps = mid(tg_rounds, [](const result& x) { return x.prefill_tps; });
      r.decode_tps = mid(tg_rounds, [](const result& x) { return x.decode_tps; });
      r.decode_gbps = mid(tg_rounds, [](const result& x) { return x.decode_gbps; });
      r.share_each_round = round_shares;
      results.push_back(r);
      graphed.push_back(measure(p, tg::model::transformer_options::graph_use::on));
      if (!llama_rounds.empty())
        llama.push_back({mid(llama_rounds, [](const auto& x) { return x.prefill_tps; }),
                         mid(llama_rounds, [](const auto& x) { return x.decode_tps; })});
      round_ratios.push_back(ratios);
    }
    // Measured on both sides of the models and the faster kept: other tenants only slow it down.
    const double bandwidth_after = tg::bench::measure_read_bandwidth({.threads = threads});
    const double bandwidth = std::max(bandwidth_before, bandwidth_after);
    std::printf("memory read bandwidth: %.2f GB/s (%u threads, 1 GiB, best of 8; %.2f before, %.2f after the models)\n",
                bandwidth, threads, bandwidth_before, bandwidth_after);
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      std::printf("%-12s %-6s  prefill %7.2f tok/s (%lld in chunks of %lld)  decode %6.2f tok/s (median of %lld)  "
                  "%6.2f GB/s = %4.1f%% of read bandwidth  (%.0f MB/token)%s\n",
                  models[i].preset, std::string(tg::synth::weight_format_name(models[i].format)).c_str(), r.prefill_tps,
                  static_cast<long long>(prompt_tokens), static_cast<long long>(chunk), r.decode_tps,
                  static_cast<long long>(decode_tokens), r.decode_gbps, 100.0 * r.decode_gbps / bandwidth,
                  double(r.bytes_per_token) / 1e6, rounds > 1 ? "  (medians of the rounds)" : "");
    }
    std::printf("decode's share of the bandwidth probed right before each round:\n");
    for (std::size_t i = 0; i < results.size(); ++i) {
      std::string each;
      for (double x : results[i].share_each_round) each += str_percent(x, each.empty());
      std::printf("%-12s %-6s  %5.1f%% (median; rounds: %s)\n", models[i].preset,
                  std::string(tg::synth::weight_format_name(models[i].format)).c_str(), 100.0 * median(results[i].share_each_round),
                  each.c_str());
    }
    std::printf("replaying a captured graph per decode step and full prefill chunk (same run; the CPU's default launches kernel by kernel):\n");
    for (std::size_t i = 0; i < graphed.size(); ++i)
      std::printf("%-12s %-6s  prefill %7.2f tok/s, decode %6.2f tok/s  ->  with graphs / without: prefill %.3f, decode %.3f\n",
                  models[i].preset, std::string(tg::synth::weight_format_name(models[i].format)).c_str(), graphed[i].prefill_tps,
                  graphed[i].decode_tps, graphed[i].prefill_tps / results[i].prefill_tps, graphed[i].decode_tps / results[i].decode_tps);
    if (llama.empty()) {
      std::printf("(set LLAMA_BENCH to a llama-bench binary to compare with llama.cpp in the same run)\n");
    } else {
      std::printf("llama.cpp llama-bench, same files, %u threads, pp%lld / tg%lld, run right after tg on each file%s:\n",
                  threads, static_cast<long long>(prompt_tokens), static_cast<long long>(decode_tokens),
                  rounds > 1 ? ", alternating; medians of the rounds" : "");
      for (std::size_t i = 0; i < llama.size(); ++i) {
        std::printf("%-12s %-6s  prefill %7.2f tok/s  decode %6.2f tok/s  ->  tg/llama.cpp prefill %.2f, decode %.2f",
                    models[i].preset, std::string(tg::synth::weight_format_name(models[i].format)).c_str(),
                    llama[i].prefill_tps, llama[i].decode_tps, results[i].prefill_tps / llama[i].prefill_tps,
                    results[i].decode_tps / llama[i].decode_tps);
        if (rounds > 1) std::printf("  (rounds, prefill/decode: %s)", round_ratios[i].c_str());
        std::printf("\n");
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llm_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
