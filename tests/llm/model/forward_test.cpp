// forward_test.cpp: the forward pass on the tiny-llama fixtures against float64 reference
// logits, as one chunk, token by token and in uneven chunks; and greedy decoding. meson runs
// it again at each lower CPU level (TG_CPU_FEATURES): pair or quad tiles, AVX2 or AVX-512.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/fixtures.hpp"
#include "llm/gguf/gguf_file.hpp"
#include "tests/llm/model/logits_compare.hpp"
#include "llm/model/transformer.hpp"
#include "drivers/cpu/cpu_target.hpp"

namespace {

const std::vector<std::int32_t> prompt = {1, 450, 4996, 17354, 1701, 432, 17204, 975, 278, 17366, 11203};

std::vector<float> read_floats(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  in.seekg(0, std::ios::end);
  std::vector<float> v(std::size_t(in.tellg()) / 4);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * 4));
  return v;
}

tg::device& cpu() {
  static tg::device d("CPU");
  return d;
}

// Whether this CPU runs the level TG_CPU_FEATURES asks for (meson's model_fixtures_<level>
// tests); where it does not, the test says so and checks nothing.
bool level_runs() {
  const char* env = std::getenv("TG_CPU_FEATURES");
  if (env == nullptr || *env == '\0') return true;
  const auto levels = tg::cpu::host_levels();
  if (std::find(levels.begin(), levels.end(), std::string(env)) != levels.end()) {
    MESSAGE("level " << std::string(env));
    return true;
  }
  MESSAGE("skipped level " << std::string(env) << ": this CPU cannot run it");
  return false;
}

// Logits of every prompt position, feeding the prompt in chunks of `chunk` tokens.
std::vector<float> prompt_logits(tg::model::transformer& m, std::size_t chunk) {
  std::vector<float> all;
  for (std::size_t at = 0; at < prompt.size(); at += chunk) {
    std::size_t n = std::min(chunk, prompt.size() - at);
    auto part = m.forward(std::span(prompt).subspan(at, n), std::int64_t(at), tg::model::head::all);
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

void check_model(const std::string& name, double min_cosine, double max_abs,
                 tg::model::kv_cache_type cache = tg::model::kv_cache_type::automatic) {
  if (!level_runs()) return;
  auto file = tg::gguf::file::open(tg::test::fixture("models/" + name + ".gguf"));
  auto want = read_floats(tg::test::fixture("models/" + name + ".np64.logits.f32"));
  tg::model::transformer m(cpu(), file, {.max_context = 64, .chunk_size = 16, .cache = cache});
  // The default cache: f32 for the F32 file (exact logits), f16 for quantized ones.
  if (cache == tg::model::kv_cache_type::automatic)
    CHECK(m.cache_type() == (name.ends_with("f32") ? tg::model::kv_cache_type::f32 : tg::model::kv_cache_type::f16));
  const auto vocab = std::size_t(m.config().vocab);
  REQUIRE(want.size() == prompt.size() * vocab);
  for (std::size_t chunk : {std::size_t(16), std::size_t(1), std::size_t(4)}) {
    CAPTURE(chunk);
    auto got = prompt_logits(m, chunk);
    // Argmax is checked where the reference's top two differ by more than the tolerance
    // (tiny-llama Q8_0, position 8: 0.003 apart; an f16 cache moves logits by up to 0.018).
    auto a = tg::test::compare_logits(got, want, vocab, max_abs);
    MESSAGE(name, " chunk ", chunk, ": min cosine ", a.min_cosine, ", max |diff| ", a.max_abs_diff);
    CHECK(a.min_cosine >= min_cosine);
    CHECK(a.max_abs_diff <= max_abs);
    CHECK(a.same_argmax);
  }
}

TEST_CASE("tiny-llama F32 logits match the float64 reference") { check_model("tiny-llama-f32", 0.9999, 1e-3); }

// Quantized matmuls also round the activations to 8 bits (activation_kernels.hpp), as
// llama.cpp does; the reference does not, hence the looser max |diff| (measured 0.017, 0.020).
TEST_CASE("tiny-llama Q8_0 logits match the float64 reference") { check_model("tiny-llama-q8_0", 0.999, 0.05); }

TEST_CASE("tiny-llama Q4_K_M logits match the float64 reference") { check_model("tiny-llama-q4_k_m", 0.999, 0.05); }

// An f16 cache rounds every key and value to 11 significant bits: held to the quantized bar.
TEST_CASE("tiny-llama F32 with an f16 KV cache matches the float64 reference") {
  check_model("tiny-llama-f32", 0.999, 0.05, tg::model::kv_cache_type::f16);
}

TEST_CASE("tiny-llama Q8_0 with an f32 KV cache matches the float64 reference") {
  check_model("tiny-llama-q8_0", 0.999, 0.05, tg::model::kv_cache_type::f32);
}

TEST_CASE("greedy decoding of tiny-llama F32 continues as llama.cpp does") {
  if (!level_runs()) return;
  auto file = tg::gguf::file::open(tg::test::fixture("models/tiny-llama-f32.gguf"));
  std::ifstream in(tg::test::fixture("models/tiny-llama-f32.greedy.txt"));
  std::string line, ids;
  while (std::getline(in, line))
    if (line.rfind("greedy: ", 0) == 0) ids = line.substr(8);
  std::vector<std::int32_t> want;
  std::istringstream parse(ids);
  for (std::int32_t id; parse >> id;) want.push_back(id);
  REQUIRE(want.size() == 16);

  tg::model::transformer m(cpu(), file, {.max_context = 64, .chunk_size = 8});
  std::vector<std::int32_t> got;
  std::vector<float> logits;
  std::size_t pos = 0;
  for (; pos < prompt.size(); pos += 8) {
    auto n = std::min<std::size_t>(8, prompt.size() - pos);
    logits = m.forward(std::span(prompt).subspan(pos, n), std::int64_t(pos));
  }
  pos = prompt.size();
  while (got.size() < want.size()) {
    auto best = std::int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    got.push_back(best);
    logits = m.forward(std::span(&got.back(), 1), std::int64_t(pos++));
  }
  CHECK(got == want);
}

TEST_CASE("forward refuses chunks that do not fit") {
  auto file = tg::gguf::file::open(tg::test::fixture("models/tiny-llama-f32.gguf"));
  tg::model::transformer m(cpu(), file, {.max_context = 16, .chunk_size = 4});
  std::vector<std::int32_t> five(5, 1), one = {1}, bad = {32000};
  CHECK_THROWS_AS(m.forward(five, 0), tg::usage_error);
  CHECK_THROWS_AS(m.forward(one, 16), tg::usage_error);
  CHECK_THROWS_AS(m.forward(bad, 0), tg::usage_error);
}

}  // namespace
