// llama_bench_runner.hpp: llama.cpp's llama-bench run on the same file, with the same threads
// and token counts, in the same run as tg's figures, so that the two are compared on one
// machine at one moment (a shared VM's speed drifts by tens of percent over minutes).
#pragma once
#include <filesystem>
#include <string>

namespace tg::bench {

struct llama_bench_figures {
  double prefill_tps = 0;  // llama-bench pp<prompt>, tokens/s
  double decode_tps = 0;   // llama-bench tg<generate>, tokens/s
};

// Runs `binary -m model -t threads -p prompt -n generate -r repetitions -o csv` and reads the
// avg_ts column of its pp and tg rows. Throws tg::usage_error naming the binary and its output
// when it fails or prints no such rows.
llama_bench_figures run_llama_bench(const std::string& binary, const std::filesystem::path& model, unsigned threads,
                                    long long prompt, long long generate, int repetitions = 3);

// The figures from llama-bench's CSV output (a header line naming the columns, then one line
// per test); exposed for its test.
llama_bench_figures parse_llama_bench_csv(const std::string& csv);

}  // namespace tg::bench
