// decode_batch_test.cpp: transformer::decode_batch: several sequences, each with its own KV
// cache, decoded in one pass give logits bit-identical to each sequence run alone (the
// server's continuous batching relies on it), as sequences join and leave the batch; and its
// argument checks. On synthetic llama (F32), qwen3 (Q8_0: int8 activations, q/k norms) and
// qwen2 (Q4_K_M: K-quant and Q6_K matmuls, QKV biases).
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <tg/core/error.hpp>
#include "llm/model/matmul_tiles.hpp"
#include "llm/model/session.hpp"
#include "llm/model/transformer.hpp"
#include "llm/synth/model_writer.hpp"

namespace {

tg::device& cpu() {
  static tg::device d("CPU");
  return d;
}

// odd_rows: 320-wide rows (Qwen2.5-0.5B's 896 likewise), which no K-quant block divides: its
// K-quant tensors fall back to Q5_0 / Q8_0, decoded as quads of bytes with AVX-512 VNNI.
std::filesystem::path write_synthetic(tg::synth::architecture arch, tg::synth::weight_format format, bool odd_rows = false) {
  tg::synth::model_spec spec = tg::synth::default_spec(arch);
  spec.format = format;
  spec.seed = 11;
  if (odd_rows) spec.dims.n_embd = 320, spec.dims.n_head = 5, spec.dims.n_head_kv = 1, spec.dims.n_ff = 640;
  auto path = std::filesystem::temp_directory_path() /
              ("tg_decode_batch_" + std::to_string(::getpid()) + "_" + std::string(weight_format_name(format)) +
               (odd_rows ? "_320" : "") + ".gguf");
  tg::synth::write_model(spec, tg::synth::byte_level_vocabulary(spec.arch), path);
  return path;
}

// The resident bytes of this process's mappings of `path` (/proc/self/smaps: Rss), or -1 when
// the file is not mapped or smaps cannot be read.
std::int64_t mapped_rss_bytes(const std::filesystem::path& path) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  std::int64_t total = -1;
  bool ours = false;
  while (std::getline(smaps, line)) {
    if (line.find(" r") != std::string::npos && line.find('-') < line.find(' ') && line.find('/') != std::string::npos)
      ours = line.substr(line.find('/')) == path.string();
    else if (line.find('-') < line.find(' ') && line.find(':') > line.find(' ')) ours = false;  // another mapping's header
    if (ours && line.rfind("Rss:", 0) == 0) total = std::max<std::int64_t>(total, 0) + std::stoll(line.substr(4)) * 1024;
  }
  return total;
}

std::vector<std::int32_t> prompt_for(int seq, std::int64_t vocab) {
  std::vector<std::int32_t> p;
  for (int i = 0; i < 5 + 3 * seq; ++i) p.push_back(std::int32_t((i * 31 + seq * 17 + 3) % vocab));
  return p;
}

void check_batched_equals_alone(tg::synth::architecture arch, tg::synth::weight_format format, bool odd_rows = false) {
  auto path = write_synthetic(arch, format, odd_rows);
  auto file = tg::gguf::file::open(path);
  constexpr int n = 4;  // a multiple of the token tile: the batch must still take one-token matmuls
  tg::model::transformer batched(cpu(), file, {.max_context = 48, .chunk_size = 8, .sequences = n});
  tg::model::transformer alone(cpu(), file, {.max_context = 48, .chunk_size = 8});
  REQUIRE(batched.sequences() == n);
  const std::int64_t vocab = batched.config().vocab;
  if (format == tg::synth::weight_format::q8_0) {  // Q8_0 decodes from its tiles: one token lane or four
    CHECK(tg::model::decodes_from_tiles(batched.weights().layers[0].wq));
    CHECK(tg::model::decodes_from_tiles(batched.weights().layers[0].down));
    CHECK(tg::model::decodes_from_tiles(batched.weights().output) == (vocab % 32 == 0));
    // -v's kernel listing names the ISA form of each kernel: the int8 matmuls' dot products.
    alone.set_profiling(true);
    alone.forward(std::vector<std::int32_t>{1}, 0, tg::model::head::last);
    const std::string report = alone.profile_report();
    CAPTURE(report);
    CHECK(report.find("-bit, int8 dot vp") != std::string::npos);
    // ... and each matmul's line the rate it read its weights at (the kernels with int8 dots
    // are the matmuls here), where no other kernel's line has one.
    std::istringstream lines(report);
    int matmuls = 0;
    for (std::string line; std::getline(lines, line);) {
      CAPTURE(line);
      const bool matmul = line.find("int8 dot") != std::string::npos;
      matmuls += matmul;
      CHECK((line.find(" GB/s") != std::string::npos) == matmul);
    }
    CHECK(matmuls >= 3);
    alone.set_profiling(false);
    // The layer matrices' file bytes left resident memory once repacked (the embedding
    // table and norms stay): under half the file, where every byte was read to repack it.
    const std::int64_t rss = mapped_rss_bytes(path), size = std::int64_t(std::filesystem::file_size(path));
    MESSAGE("the Q8_0 file's mappings hold " << rss << " resident bytes of its " << size);
    if (rss >= 0) CHECK(rss < size / 2);
  }

  // Each sequence's prompt through the batched model's cache `seq`; the same prompts through
  // the lone model's one cache, one after another, give the reference.
  std::vector<std::vector<std::int32_t>> tokens(n);
  std::vector<std::int64_t> position(n);
  for (int seq = 0; seq < n; ++seq) {
    tokens[seq] = prompt_for(seq, vocab);
    std::size_t at = 0;  // cut as session::prefill cuts it, so the cached keys and values match
    for (std::int64_t size : tg::model::prefill_chunks(std::int64_t(tokens[seq].size()), 8, batched.token_tile())) {
      batched.forward(std::span(tokens[seq]).subspan(at, std::size_t(size)), std::int64_t(at), tg::model::head::none, seq);
      at += std::size_t(size);
    }
    position[seq] = std::int64_t(tokens[seq].size());
  }
  // Steps: all four; then without sequence 2 (it left); then 2 again with 0 and 3 (3 joins late).
  const std::vector<std::vector<int>> steps = {{0, 1, 2, 3}, {0, 1, 3}, {2, 0, 3}, {1}};
  for (const auto& step : steps) {
    std::vector<std::int32_t> ids;
    std::vector<std::int64_t> at;
    for (int seq : step) {
      ids.push_back(std::int32_t((position[seq] * 7 + seq) % vocab));
      at.push_back(position[seq]);
    }
    std::vector<float> got = batched.decode_batch(ids, at, step);
    REQUIRE(got.size() == step.size() * std::size_t(vocab));
    for (std::size_t i = 0; i < step.size(); ++i) {
      const int seq = step[i];
      tokens[seq].push_back(ids[i]);
      // The lone model recomputes the sequence from scratch: prompt chunks, then one token at a time.
      tg::model::session s(alone);
      std::vector<float> want;
      const std::size_t prompt = prompt_for(seq, vocab).size();
      want = s.prefill(std::span(tokens[seq]).first(prompt));
      for (std::size_t t = prompt; t < tokens[seq].size(); ++t) want = s.decode(tokens[seq][t]);
      CAPTURE(seq);
      CHECK(std::equal(want.begin(), want.end(), got.begin() + std::ptrdiff_t(i * std::size_t(vocab))));
      ++position[seq];
    }
  }
  std::filesystem::remove(path);
}

}  // namespace

TEST_CASE("a decode batch gives each sequence the logits it gets alone (llama, F32)") {
  check_batched_equals_alone(tg::synth::architecture::llama, tg::synth::weight_format::f32);
}

TEST_CASE("a decode batch gives each sequence the logits it gets alone (qwen3, Q8_0)") {
  check_batched_equals_alone(tg::synth::architecture::qwen3, tg::synth::weight_format::q8_0);
}

TEST_CASE("a decode batch gives each sequence the logits it gets alone (qwen2, Q4_K_M)") {
  check_batched_equals_alone(tg::synth::architecture::qwen2, tg::synth::weight_format::q4_k_m);
}

TEST_CASE("a decode batch gives each sequence the logits it gets alone (qwen2, Q4_K_M of 320-wide rows: Q5_0)") {
  check_batched_equals_alone(tg::synth::architecture::qwen2, tg::synth::weight_format::q4_k_m, true);
}

TEST_CASE("decode_batch refuses sequences it has no cache for, repeats and bad positions") {
  auto path = write_synthetic(tg::synth::architecture::llama, tg::synth::weight_format::f32);
  auto file = tg::gguf::file::open(path);
  tg::model::transformer m(cpu(), file, {.max_context = 16, .chunk_size = 4, .sequences = 2});
  std::vector<std::int32_t> two = {1, 2};
  CHECK_THROWS_AS(m.decode_batch(two, std::vector<std::int64_t>{0, 0}, std::vector<int>{0, 2}), tg::usage_error);
  CHECK_THROWS_AS(m.decode_batch(two, std::vector<std::int64_t>{0, 0}, std::vector<int>{1, 1}), tg::usage_error);
  CHECK_THROWS_AS(m.decode_batch(two, std::vector<std::int64_t>{0, 16}, std::vector<int>{0, 1}), tg::usage_error);
  CHECK_THROWS_AS(m.decode_batch(two, std::vector<std::int64_t>{0}, std::vector<int>{0, 1}), tg::usage_error);
  CHECK_THROWS_AS(m.forward(std::span(two).first(1), 0, tg::model::head::last, 2), tg::usage_error);
  std::filesystem::remove(path);
}
