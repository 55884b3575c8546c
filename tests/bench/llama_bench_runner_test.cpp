// llama_bench_runner_test.cpp: reading llama-bench's CSV, on lines llama.cpp's llama-bench
// (b4747, built with -DGGML_NATIVE=OFF and the AVX-512 flags) printed for
// `-m bench-qwen2.5-0.5b-Q8_0.gguf -t 2 -p 16 -n 4 -r 1 -o csv` on this project's build machine
// while it was busy compiling (so the figures are low; only their parsing matters here).
#include <doctest/doctest.h>

#include <tg/core/error.hpp>

#include "tests/bench/llama_bench_runner.hpp"

namespace {

const char* header =
    "build_commit,build_number,cpu_info,gpu_info,backends,model_filename,model_type,model_size,model_n_params,"
    "n_batch,n_ubatch,n_threads,cpu_mask,cpu_strict,poll,type_k,type_v,n_gpu_layers,split_mode,main_gpu,"
    "no_kv_offload,flash_attn,tensor_split,use_mmap,embeddings,n_prompt,n_gen,test_time,avg_ns,stddev_ns,avg_ts,"
    "stddev_ts\n";
const char* pp_row =
    "\"unknown\",\"0\",\"Intel(R) Xeon(R) Processor\",\"\",\"CPU\",\"build/models/bench-qwen2.5-0.5b-Q8_0.gguf\","
    "\"qwen2 1B Q8_0\",\"525120000\",\"494032768\",\"2048\",\"512\",\"2\",\"0x0\",\"0\",\"50\",\"f16\",\"f16\",\"99\","
    "\"layer\",\"0\",\"0\",\"0\",\"0.00\",\"1\",\"0\",\"16\",\"0\",\"2026-12-03T12:00:35Z\",\"1253541026\",\"0\","
    "\"12.763842\",\"0.000000\"\n";
const char* tg_row =
    "\"unknown\",\"0\",\"Intel(R) Xeon(R) Processor\",\"\",\"CPU\",\"build/models/bench-qwen2.5-0.5b-Q8_0.gguf\","
    "\"qwen2 1B Q8_0\",\"525120000\",\"494032768\",\"2048\",\"512\",\"2\",\"0x0\",\"0\",\"50\",\"f16\",\"f16\",\"99\","
    "\"layer\",\"0\",\"0\",\"0\",\"0.00\",\"1\",\"0\",\"0\",\"4\",\"2026-12-03T12:00:38Z\",\"1467486949\",\"0\","
    "\"2.725748\",\"0.000000\"\n";

}  // namespace

TEST_CASE("llama-bench CSV: the pp row gives prefill, the tg row decode, in any order and after log lines") {
  const std::string log = "load_backend: loaded CPU backend\n";
  for (const std::string& csv : {log + header + pp_row + tg_row, std::string(header) + tg_row + pp_row}) {
    const auto f = tg::bench::parse_llama_bench_csv(csv);
    CHECK(f.prefill_tps == doctest::Approx(12.763842));
    CHECK(f.decode_tps == doctest::Approx(2.725748));
  }
}

TEST_CASE("llama-bench CSV: a quoted comma stays inside its field") {
  std::string row = tg_row;
  row.replace(row.find("Intel(R) Xeon(R) Processor"), 5, "Intel, Inc.");
  CHECK(tg::bench::parse_llama_bench_csv(std::string(header) + pp_row + row).decode_tps == doctest::Approx(2.725748));
}

TEST_CASE("llama-bench CSV: output without a header or without one of the rows is an error that says so") {
  CHECK_THROWS_WITH_AS(tg::bench::parse_llama_bench_csv("error: failed to load model\n"),
                       doctest::Contains("no CSV header"), tg::usage_error);
  CHECK_THROWS_WITH_AS(tg::bench::parse_llama_bench_csv(std::string(header) + pp_row),
                       doctest::Contains("lacks a prompt (pp) or a generation (tg) row"), tg::usage_error);
}

TEST_CASE("run_llama_bench: a binary that fails is reported with its output") {
  CHECK_THROWS_WITH_AS(tg::bench::run_llama_bench("/bin/false", "model.gguf", 2, 16, 4),
                       doctest::Contains("llama-bench exited with status"), tg::usage_error);
}
