// serve_bench.cpp: `llm --serve`'s continuous batching measured: aggregate decode tokens/s and
// per-request latency with 1, 2, 4 and 8 concurrent streaming clients on the Llama-3.2-1B-shaped
// Q8_0 synthetic model, beside the single-stream decode rate and the 4-token prefill rate of the
// same model in the same run (4 sequences per step cost about what a 4-token chunk does, so the
// prefill rate bounds what 4 clients can get).
//
//   serve_bench build/models     # synthesizes build/models/bench-llama3.2-1b-Q8_0.gguf once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <tg/llm/llm.hpp>
#include "llm/model/transformer.hpp"
#include "llm/serve/server.hpp"
#include "llm/synth/model_presets.hpp"
#include "llm/synth/model_writer.hpp"

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;
using nlohmann::json;

constexpr int threads = 2, max_clients = 8, tokens_per_request = 32;

double seconds(clock_type::time_point a, clock_type::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// The same file llm_bench writes: the byte-level vocabulary padded to the real model's size.
fs::path model_file(const fs::path& dir) {
  const fs::path path = dir / "bench-llama3.2-1b-Q8_0.gguf";
  if (fs::exists(path)) return path;
  const auto* preset = tg::synth::find_preset("llama3.2-1b");
  tg::synth::model_spec spec = tg::synth::spec_from_preset(*preset);
  spec.format = tg::synth::weight_format::q8_0;
  tg::synth::vocabulary vocab = tg::synth::byte_level_vocabulary(spec.arch);
  tg::synth::pad_vocabulary(vocab, preset->vocab_size);
  fs::create_directories(dir);
  std::fprintf(stderr, "synthesizing %s ...\n", path.c_str());
  tg::synth::write_model(spec, vocab, path);
  return path;
}

struct request_result {
  double first_token_s = 0, total_s = 0;
  int tokens = 0;
};

request_result stream_one(int port, int i) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(600, 0);
  request_result r;
  const auto t0 = clock_type::now();
  std::string buffered;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = json{{"prompt", "Request " + std::to_string(i) + " says"}, {"max_tokens", tokens_per_request}, {"temperature", 0},
                  {"stream", true}, {"stream_options", {{"include_usage", true}}}}.dump();
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    buffered.append(data, n);
    for (std::size_t end; (end = buffered.find("\n\n")) != std::string::npos; buffered.erase(0, end + 2)) {
      const std::string event = buffered.substr(0, end);
      if (event.rfind("data: {", 0) != 0) continue;
      json chunk = json::parse(event.substr(6));
      if (chunk.contains("usage") && chunk["usage"].is_object()) r.tokens = chunk["usage"]["completion_tokens"];
      if (r.first_token_s == 0 && !chunk["choices"].empty() && !chunk["choices"][0]["text"].get<std::string>().empty())
        r.first_token_s = seconds(t0, clock_type::now());
    }
    return true;
  };
  c.send(req);
  r.total_s = seconds(t0, clock_type::now());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::path("models");
  auto m = tg::llm::model::open(model_file(dir).string(),
                                {.threads = threads, .max_context = 512, .chunk_size = 32, .sequences = max_clients + 1});
  tg::model::transformer& net = m.transformer();
  // Single stream, as `llm --benchmark` measures it: one token per forward pass, on a cache
  // of its own (the server's slots keep theirs). This VM's memory bandwidth drifts by up to
  // half within minutes, so it is measured again right before each client count's run and
  // each ratio is against that figure.
  const int own_sequence = max_clients;
  auto measure_single = [&] {
    net.forward(std::vector<std::int32_t>{1, 2, 3, 4}, 0, tg::model::head::last, own_sequence);
    const auto t0 = clock_type::now();
    for (int i = 0; i < tokens_per_request; ++i)
      net.forward(std::vector<std::int32_t>{std::int32_t(10 + i)}, 4 + i, tg::model::head::last, own_sequence);
    return tokens_per_request / seconds(t0, clock_type::now());
  };
  double single = measure_single(), prefill4 = 0;
  {
    const auto t0 = clock_type::now();
    for (int i = 0; i < 8; ++i) net.forward(std::vector<std::int32_t>{5, 6, 7, 8}, 100 + 4 * i, tg::model::head::last, own_sequence);
    prefill4 = 32 / seconds(t0, clock_type::now());
  }
  std::printf("single-stream decode %.2f tok/s, 4-token prefill %.2f tok/s (%d threads)\n", single, prefill4, threads);
  // The engine's decode pass alone, without HTTP: n sequences per transformer::decode_batch.
  // SERVE_BENCH_PROFILE=1 adds a per-kernel profile of one more step of each.
  const bool profile = std::getenv("SERVE_BENCH_PROFILE") != nullptr;
  for (int n : {1, 2, 4, 8}) {
    std::vector<std::int32_t> ids(static_cast<std::size_t>(n), 20);
    std::vector<std::int64_t> at(ids.size(), 0);
    std::vector<int> seqs(ids.size());
    for (int i = 0; i < n; ++i) seqs[std::size_t(i)] = i;
    const auto t0 = clock_type::now();
    for (int step = 0; step < 8; ++step) {
      for (auto& p : at) p = step;
      net.decode_batch(ids, at, seqs);
    }
    const double per_step = seconds(t0, clock_type::now()) / 8;
    std::printf("decode_batch of %d: %.1f ms per step, %.2f tok/s\n", n, per_step * 1e3, n / per_step);
    if (profile) {  // where one more step's time goes, kernel by kernel (each launch waited for)
      net.set_profiling(true);
      net.decode_batch(ids, at, seqs);
      std::printf("%s", net.profile_report().c_str());
      net.set_profiling(false);
    }
  }
  std::fflush(stdout);
  tg::serve::server srv(m, {.port = 0, .parallel = max_clients, .queue_limit = 16});
  std::thread serving([&] { srv.run(); });
  for (int clients : {1, 2, 4, 8}) {
    single = measure_single();
    std::vector<request_result> results(static_cast<std::size_t>(clients));
    std::vector<std::thread> pool;
    const auto t0 = clock_type::now();
    for (int i = 0; i < clients; ++i) pool.emplace_back([&, i] { results[std::size_t(i)] = stream_one(srv.port(), i); });
    for (auto& t : pool) t.join();
    const double wall = seconds(t0, clock_type::now());
    int tokens = 0;
    double first = 0, total = 0;
    for (const auto& r : results) {
      tokens += r.tokens;
      first = std::max(first, r.first_token_s);
      total = std::max(total, r.total_s);
    }
    const double aggregate = tokens / wall;
    std::printf("%d clients: aggregate %.2f tok/s (%.2fx the single stream's %.2f just before), %d tokens in %.2f s; "
                "worst first token %.3f s, worst request %.2f s\n",
                clients, aggregate, aggregate / single, single, tokens, wall, first, total);
    std::fflush(stdout);
  }
  srv.stop();
  serving.join();
  return 0;
}
