// synth_forward_test.cpp: llama, qwen2 and qwen3 synthetic models (QKV bias, q/k norm, NEOX
// RoPE, rope_freqs, untied head, several quant formats) against the float64 reference pass.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include "tests/llm/model/logits_compare.hpp"
#include "llm/model/transformer.hpp"
#include "tests/llm/model/reference_forward.hpp"
#include "llm/synth/model_writer.hpp"
#include <tg/log.hpp>

namespace {

using namespace tg::synth;

tg::device& cpu() {
  static tg::device d("CPU");
  return d;
}

// Quantized matmuls round their activations to 8 bits (activation_kernels.hpp) where the
// reference does not: such models are held to the bar for quantized files, cosine
// >= 0.999 (measured >= 0.99978: K-quant matmuls round per 256 values).
bool rounds_activations(const model_spec& spec) {
  switch (spec.format) {
    case weight_format::q8_0: case weight_format::q4_0: case weight_format::q4_k: case weight_format::q5_k:
    case weight_format::q6_k: case weight_format::q4_k_m:
      return true;
    default:
      return false;
  }
}

// Logits at every position of a prompt fed in chunks of `chunk`, against the reference; the
// default prompt is 9 tokens, a longer one runs the attention kernels over a longer context.
void check_synthetic(model_spec spec, const std::string& label, std::size_t prompt_tokens = 9, std::size_t chunk = 4,
                     std::optional<tg::gguf::tensor_type> must_hold = std::nullopt) {
  CAPTURE(label);
  spec.random_norms = true;
  spec.seed = 11;
  auto path = std::filesystem::temp_directory_path() / ("tg_model_test_" + std::to_string(::getpid()) + "_" + label + ".gguf");
  write_model(spec, byte_level_vocabulary(spec.arch), path);
  auto file = tg::gguf::file::open(path);
  if (must_hold) {  // the file has the type the case is about (the writer's fallbacks chose it)
    const auto t = file.tensors();
    CHECK(std::any_of(t.begin(), t.end(), [&](const tg::gguf::tensor_info& i) { return i.type == *must_hold; }));
  }
  tg::model::transformer m(cpu(), file, {.max_context = std::int64_t(std::max<std::size_t>(32, prompt_tokens)),
                                         .chunk_size = std::int64_t(chunk)});
  std::vector<std::int32_t> tokens = {3, 70, 101, 44, 250, 17, 9, 200, 65};
  for (std::size_t i = tokens.size(); i < prompt_tokens; ++i) tokens.push_back(std::int32_t((i * 37 + 3) % 256));
  tokens.resize(prompt_tokens);
  std::vector<float> got;
  for (std::size_t at = 0; at < tokens.size(); at += chunk) {
    auto n = std::min<std::size_t>(chunk, tokens.size() - at);
    auto part = m.forward(std::span(tokens).subspan(at, n), std::int64_t(at), tg::model::head::all);
    got.insert(got.end(), part.begin(), part.end());
  }
  auto want64 = tg::test::reference_logits(file, m.config(), tokens);
  std::vector<float> want(want64.begin(), want64.end());
  auto a = tg::test::compare_logits(got, want, std::size_t(m.config().vocab));
  MESSAGE(label, ": min cosine ", a.min_cosine, ", max |diff| ", a.max_abs_diff);
  CHECK(a.min_cosine >= (rounds_activations(spec) ? 0.999 : 0.9999));
  CHECK(a.max_abs_diff <= (rounds_activations(spec) ? 0.05 : 1e-3));
  // Random weights leave near-ties among the logits that 8-bit activations may reorder
  // (qwen3 Q5_K: one position at cosine 0.99992), so argmax is exact math's promise only.
  if (!rounds_activations(spec)) CHECK(a.same_argmax);
  std::filesystem::remove(path);
}

TEST_CASE("llama with rope_freqs and an untied head matches the reference") {
  model_spec s = default_spec(architecture::llama);
  s.rope_freqs = true;
  s.tied_output = false;
  check_synthetic(s, "llama_f32");
  s.format = weight_format::q4_0;
  check_synthetic(s, "llama_q4_0");
  s.format = weight_format::f16;
  check_synthetic(s, "llama_f16");
}

TEST_CASE("a 150-token prompt in chunks of 32 (attention over a longer context, GQA groups of 2 and 4) matches the reference") {
  model_spec s = default_spec(architecture::llama);
  REQUIRE(s.dims.n_head / s.dims.n_head_kv == 2);
  check_synthetic(s, "llama_f32_150", 150, 32);
  s.dims.n_head_kv = 1;
  s.format = weight_format::q4_k_m;
  check_synthetic(s, "llama_q4_k_m_150_group4", 150, 32);
}

TEST_CASE("qwen2 with QKV biases and NEOX RoPE matches the reference") {
  model_spec s = default_spec(architecture::qwen2);
  REQUIRE(s.qkv_bias);
  check_synthetic(s, "qwen2_f32");
  s.format = weight_format::q8_0;
  check_synthetic(s, "qwen2_q8_0");
}

// Qwen2.5-0.5B's rows (896) are no multiple of 256: its K-quant tensors fall back to Q5_0 and
// Q5_1 (llm/synth/type_mix.cpp, as llama.cpp's quantizer does). The 9-token prompt's last chunk of
// one token runs decode's kernels, which with AVX-512 VNNI take these types as quads of bytes
// (linear_kernels.cpp: cpu_decode_quads) and need the int8 copy of the rounded activations.
TEST_CASE("qwen2 rows that no K-quant block divides fall back to Q5_0 and Q5_1 and match the reference") {
  model_spec s = default_spec(architecture::qwen2);
  s.dims.n_embd = 320, s.dims.n_head = 5, s.dims.n_head_kv = 1, s.dims.n_ff = 640;
  s.format = weight_format::q4_k_m;
  check_synthetic(s, "qwen2_320_q4_k_m", 9, 4, tg::gguf::tensor_type::q5_0);
  s.format = weight_format::q5_k;
  check_synthetic(s, "qwen2_320_q5_k", 9, 4, tg::gguf::tensor_type::q5_1);
}

// Where the memory available cannot take prefill's tiles beside decode's (Q6_K's 16-bit prefill
// tiles, Q5_K's whole bytes), the weights get decode's tiles alone and prefill reads the file's
// blocks: the logits still match. TG_MEMORY_AVAILABLE stands in for /proc/meminfo.
TEST_CASE("a model whose prefill tiles do not fit the memory available decodes from its tiles alone and matches the reference") {
  model_spec s = default_spec(architecture::llama);
  s.format = weight_format::q4_k_m;
  auto path = std::filesystem::temp_directory_path() / ("tg_model_test_" + std::to_string(::getpid()) + "_tight.gguf");
  write_model(s, byte_level_vocabulary(s.arch), path);
  std::uint64_t file_bytes = 0;
  {
    auto file = tg::gguf::file::open(path);
    for (const auto& t : file.tensors()) file_bytes += t.size_bytes;
  }
  std::filesystem::remove(path);
  // Twice the file's bytes available: decode's tiles (about the file) fit in half, the full set
  // (Q6_K's 16-bit copy beside its 6-bit one) does not.
  const std::string available = std::to_string(2 * file_bytes + file_bytes / 8);
  setenv("TG_MEMORY_AVAILABLE", available.c_str(), 1);
  std::vector<std::string> warnings;
  tg::set_log_callback([&](tg::log_level level, std::string_view line) {
    if (level == tg::log_level::warning) warnings.emplace_back(line);
  });
  check_synthetic(s, "llama_q4_k_m_tight");
  tg::set_log_callback({});
  REQUIRE(warnings.size() == 1);  // the load said what it did
  CHECK(warnings[0].find("prefill tiles skipped") != std::string::npos);
  CHECK(warnings[0].find("decode reads its tiles") != std::string::npos);
  setenv("TG_MEMORY_AVAILABLE", "a lot", 1);
  CHECK_THROWS_WITH_AS(check_synthetic(s, "llama_q4_k_m_bad_env"), "TG_MEMORY_AVAILABLE=a lot: give a number of bytes", tg::usage_error);
  unsetenv("TG_MEMORY_AVAILABLE");
}

TEST_CASE("qwen3 with q/k norms and a wide head dim matches the reference") {
  model_spec s = default_spec(architecture::qwen3);
  check_synthetic(s, "qwen3_f32");
  s.format = weight_format::q4_k_m;
  check_synthetic(s, "qwen3_q4_k_m");
  s.format = weight_format::q5_k;
  check_synthetic(s, "qwen3_q5_k");
}

}  // namespace
