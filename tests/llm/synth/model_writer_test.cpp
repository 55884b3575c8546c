// model_writer_test.cpp: whole synthetic models written to memory and read back with the reader.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "llm/synth/tensor_plan.hpp"
#include "llm/synth/tensor_values.hpp"
#include "llm/synth/type_mix.hpp"
#include "tests/llm/synth/synth_test_util.hpp"

namespace tg::synth {
namespace {

using gguf::tensor_type;

constexpr weight_format all_formats[] = {weight_format::f32,  weight_format::f16,  weight_format::bf16,
                                         weight_format::q8_0, weight_format::q4_0, weight_format::q4_k,
                                         weight_format::q5_k, weight_format::q6_k, weight_format::q4_k_m};
constexpr architecture all_archs[] = {architecture::llama, architecture::qwen2, architecture::qwen3};

// Small, but with every row a whole number of 256-value blocks so no type falls back.
model_spec small_spec(architecture arch, weight_format format = weight_format::f32) {
  model_spec spec = default_spec(arch);
  spec.dims.n_embd = 256;
  spec.dims.n_layer = 2;
  spec.dims.n_head = 4;
  spec.dims.n_head_kv = 2;
  spec.dims.n_ff = 512;
  if (arch == architecture::qwen3) spec.dims.head_dim = 64;  // set, and q_dim stays 256
  spec.format = format;
  spec.seed = 42;
  return spec;
}

// The shape of every tensor of `spec`, by name (gguf-py/gguf/constants.py: TENSOR_NAMES; {in, out} for matrices).
std::map<std::string, std::vector<std::uint64_t>> expected_shapes(const model_spec& spec, std::uint64_t vocab) {
  const model_dims& d = spec.dims;
  const std::uint64_t hd = d.resolved_head_dim(), q = hd * d.n_head, kv = hd * d.n_head_kv;
  std::map<std::string, std::vector<std::uint64_t>> s{{"token_embd.weight", {d.n_embd, vocab}},
                                                      {"output_norm.weight", {d.n_embd}}};
  if (!spec.tied_output) s["output.weight"] = {d.n_embd, vocab};
  if (spec.rope_freqs) s["rope_freqs.weight"] = {hd / 2};
  for (std::uint32_t i = 0; i < d.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    s[b + "attn_norm.weight"] = {d.n_embd};
    s[b + "attn_q.weight"] = {d.n_embd, q};
    s[b + "attn_k.weight"] = {d.n_embd, kv};
    s[b + "attn_v.weight"] = {d.n_embd, kv};
    s[b + "attn_output.weight"] = {q, d.n_embd};
    s[b + "ffn_norm.weight"] = {d.n_embd};
    s[b + "ffn_gate.weight"] = {d.n_embd, d.n_ff};
    s[b + "ffn_up.weight"] = {d.n_embd, d.n_ff};
    s[b + "ffn_down.weight"] = {d.n_ff, d.n_embd};
    if (spec.qkv_bias) {
      s[b + "attn_q.bias"] = {q};
      s[b + "attn_k.bias"] = {kv};
      s[b + "attn_v.bias"] = {kv};
    }
    if (spec.arch == architecture::qwen3) {
      s[b + "attn_q_norm.weight"] = {hd};
      s[b + "attn_k_norm.weight"] = {hd};
    }
  }
  return s;
}

// The keys a loader needs (gguf-py/gguf/constants.py: Keys).
std::vector<std::string> required_keys(const model_spec& spec) {
  const std::string a(architecture_name(spec.arch));
  std::vector<std::string> keys{"general.architecture", a + ".context_length", a + ".embedding_length",
                                a + ".block_count", a + ".feed_forward_length", a + ".attention.head_count",
                                a + ".attention.head_count_kv", a + ".attention.layer_norm_rms_epsilon",
                                a + ".rope.freq_base", a + ".rope.dimension_count", a + ".vocab_size",
                                "general.file_type", "tokenizer.ggml.model", "tokenizer.ggml.tokens"};
  if (spec.arch == architecture::qwen3) {
    keys.push_back(a + ".attention.key_length");
    keys.push_back(a + ".attention.value_length");
  }
  return keys;
}

std::vector<std::byte> tensor_bytes(const gguf::file& f, std::string_view name) {
  const auto span = f.tensor_bytes(f.get_tensor(name));
  return {span.begin(), span.end()};
}

struct moments {
  double mean, std;
};
moments moments_of(const std::vector<float>& v) {
  double sum = 0.0, sq = 0.0;
  for (const float x : v) {
    sum += x;
    sq += static_cast<double>(x) * x;
  }
  const double mean = sum / static_cast<double>(v.size());
  return {mean, std::sqrt(sq / static_cast<double>(v.size()) - mean * mean)};
}

}  // namespace

TEST_CASE("every architecture and weight format makes a model the reader accepts") {
  for (const architecture arch : all_archs) {
    for (const weight_format format : all_formats) {
      const model_spec spec = small_spec(arch, format);
      CAPTURE(architecture_name(arch));
      CAPTURE(weight_format_name(format));
      const vocabulary vocab = byte_level_vocabulary(arch);
      const auto m = test::write_and_open(spec, vocab);
      const gguf::file& f = m->file;
      CHECK(f.version() == 3);
      for (const std::string& key : required_keys(spec)) {
        CAPTURE(key);
        CHECK(f.find(key) != nullptr);
      }
      CHECK(f.get_string("general.architecture") == architecture_name(arch));
      CHECK(f.get_u32(std::string(architecture_name(arch)) + ".vocab_size") == vocab.token_count);
      const bool quantized =
          format != weight_format::f32 && format != weight_format::f16 && format != weight_format::bf16;
      CHECK((f.find("general.quantization_version") != nullptr) == quantized);

      const auto shapes = expected_shapes(spec, vocab.token_count);
      CHECK(f.tensors().size() == shapes.size());
      for (const gguf::tensor_info& t : f.tensors()) {
        CAPTURE(t.name);
        const auto it = shapes.find(std::string(t.name));
        REQUIRE(it != shapes.end());
        CHECK(std::vector<std::uint64_t>(t.ne.begin(), t.ne.begin() + t.n_dims) == it->second);
        if (t.n_dims == 1) CHECK(t.type == tensor_type::f32);
        const std::vector<float> values = test::dequantized(f, t.name);
        CHECK(std::all_of(values.begin(), values.end(), [](float x) { return std::isfinite(x); }));
      }
    }
  }
}

TEST_CASE("plain formats store every matrix in their type and Q4_K_M mixes Q4_K and Q6_K") {
  const model_spec q6 = small_spec(architecture::llama, weight_format::q6_k);
  const auto m = test::write_and_open(q6, byte_level_vocabulary(q6.arch));
  for (const gguf::tensor_info& t : m->file.tensors())
    CHECK(t.type == (t.n_dims == 2 ? tensor_type::q6_k : tensor_type::f32));

  model_spec mix = small_spec(architecture::qwen2, weight_format::q4_k_m);
  mix.tied_output = false;
  mix.dims.n_layer = 8;  // use_more_bits(i, 8): layers 0 (i < 1), 3, 6 ((i-1) % 3 == 2) and 7 (i >= 7)
  const auto q = test::write_and_open(mix, byte_level_vocabulary(mix.arch));
  const gguf::file& f = q->file;
  CHECK(f.get_tensor("output.weight").type == tensor_type::q6_k);
  CHECK(f.get_tensor("token_embd.weight").type == tensor_type::q4_k);  // untied: stays Q4_K
  for (std::uint32_t i = 0; i < 8; ++i) {
    CAPTURE(i);
    const tensor_type more = (i == 0 || i == 3 || i == 6 || i == 7) ? tensor_type::q6_k : tensor_type::q4_k;
    const std::string b = "blk." + std::to_string(i) + ".";
    CHECK(f.get_tensor(b + "attn_v.weight").type == more);
    CHECK(f.get_tensor(b + "ffn_down.weight").type == more);
    CHECK(f.get_tensor(b + "attn_k.weight").type == tensor_type::q4_k);
    CHECK(f.get_tensor(b + "attn_q.bias").type == tensor_type::f32);
  }
}

TEST_CASE("K-quant rows of other widths fall back to Q5_0, Q8_0 and F16 and still load") {
  model_spec spec = small_spec(architecture::qwen2, weight_format::q4_k_m);
  spec.dims.n_embd = 160;  // 5 * 32: Q4_K -> Q5_0, Q6_K -> Q8_0
  spec.dims.n_head = 4;
  spec.dims.n_head_kv = 4;
  spec.dims.n_ff = 200;  // not a multiple of 32: ffn_down rows fall back to F16
  spec.tied_output = false;
  const auto m = test::write_and_open(spec, byte_level_vocabulary(spec.arch));
  const gguf::file& f = m->file;
  CHECK(f.get_tensor("blk.0.attn_q.weight").type == tensor_type::q5_0);
  CHECK(f.get_tensor("output.weight").type == tensor_type::q8_0);
  CHECK(f.get_tensor("blk.0.ffn_down.weight").type == tensor_type::f16);
  CHECK(f.get_tensor("blk.0.ffn_up.weight").type == tensor_type::q5_0);
}

TEST_CASE("qwen2 biases, qwen3 head norms and llama rope_freqs have their shapes and values") {
  SUBCASE("qwen2 biases are random, like the matrices") {
    const model_spec spec = small_spec(architecture::qwen2);
    const auto m = test::write_and_open(spec, byte_level_vocabulary(spec.arch));
    const std::vector<float> bias = test::dequantized(m->file, "blk.1.attn_k.bias");
    CHECK(bias.size() == 128);
    CHECK(moments_of(bias).std == doctest::Approx(0.02).epsilon(0.25));
  }
  SUBCASE("qwen3 q_norm and k_norm are head_dim long") {
    model_spec spec = small_spec(architecture::qwen3);
    spec.dims.head_dim = 48;
    const auto m = test::write_and_open(spec, byte_level_vocabulary(spec.arch));
    CHECK(m->file.get_tensor("blk.0.attn_q_norm.weight").ne[0] == 48);
    CHECK(m->file.get_tensor("blk.0.attn_q.weight").ne[1] == 4 * 48);
    CHECK(m->file.get_u32("qwen3.attention.key_length") == 48);
    CHECK(m->file.get_u32("qwen3.rope.dimension_count") == 48);
  }
  SUBCASE("llama rope_freqs rise from 1 at high frequencies to 32 at low ones") {
    model_spec spec = small_spec(architecture::llama);
    spec.rope_freqs = true;
    const auto m = test::write_and_open(spec, byte_level_vocabulary(spec.arch));
    const std::vector<float> f = test::dequantized(m->file, "rope_freqs.weight");
    REQUIRE(f.size() == 32);
    CHECK(f.front() == 1.0f);
    CHECK(f.back() == 32.0f);
    for (std::size_t i = 1; i < f.size(); ++i) CHECK(f[i] >= f[i - 1]);
    CHECK(m->file.find("llama.attention.key_length") == nullptr);  // head_dim is n_embd / n_head
  }
}

TEST_CASE("matrices are N(0, 0.02^2) and norm weights are 1, or near 1 on request") {
  model_spec spec = small_spec(architecture::llama);
  const auto m = test::write_and_open(spec, byte_level_vocabulary(spec.arch));
  const moments w = moments_of(test::dequantized(m->file, "blk.0.ffn_up.weight"));
  CHECK(std::fabs(w.mean) < 0.001);
  CHECK(w.std == doctest::Approx(0.02).epsilon(0.02));
  for (const float x : test::dequantized(m->file, "blk.0.attn_norm.weight")) CHECK(x == 1.0f);

  spec.random_norms = true;
  const auto r = test::write_and_open(spec, byte_level_vocabulary(spec.arch));
  const moments n = moments_of(test::dequantized(r->file, "output_norm.weight"));
  CHECK(n.mean == doctest::Approx(1.0).epsilon(0.03));
  CHECK(n.std == doctest::Approx(0.1).epsilon(0.2));
}

TEST_CASE("weights are a function of the seed alone") {
  const model_spec spec = small_spec(architecture::qwen3, weight_format::q4_k);
  const vocabulary vocab = byte_level_vocabulary(spec.arch);
  CHECK(test::write_bytes(spec, vocab) == test::write_bytes(spec, vocab));

  model_spec other = spec;
  other.seed = 43;
  const auto a = test::write_and_open(spec, vocab), b = test::write_and_open(other, vocab);
  CHECK(tensor_bytes(a->file, "blk.0.attn_q.weight") != tensor_bytes(b->file, "blk.0.attn_q.weight"));
  // Different tensors of one model differ too (each has its own stream).
  CHECK(test::dequantized(a->file, "blk.0.ffn_gate.weight") != test::dequantized(a->file, "blk.0.ffn_up.weight"));
}

TEST_CASE("the thread count does not change the bytes") {
  const model_spec spec = small_spec(architecture::llama, weight_format::q4_k_m);
  vocabulary vocab = byte_level_vocabulary(spec.arch);
  pad_vocabulary(vocab, 9000);  // token_embd: 2.3M values, several tasks per chunk
  CHECK(test::write_bytes(spec, vocab, 1) == test::write_bytes(spec, vocab, 4));
}

TEST_CASE("a quantized model is the quantization of the F32 model with the same seed") {
  const model_spec f32 = small_spec(architecture::llama, weight_format::f32);
  const model_spec q8 = small_spec(architecture::llama, weight_format::q8_0);
  const vocabulary vocab = byte_level_vocabulary(f32.arch);
  const auto a = test::write_and_open(f32, vocab), b = test::write_and_open(q8, vocab);
  for (const char* name : {"token_embd.weight", "blk.1.attn_output.weight", "blk.0.ffn_down.weight"}) {
    CAPTURE(name);
    CHECK(test::relative_rms_error(test::dequantized(b->file, name), test::dequantized(a->file, name)) < 0.007);
  }
}

TEST_CASE("values do not depend on how rows are split into chunks") {
  const model_spec spec = small_spec(architecture::llama);
  const std::vector<planned_tensor> plan = plan_tensors(spec, 300);
  const planned_tensor& t = plan.front();  // token_embd, 300 rows of 256
  std::vector<float> all(t.row_length() * 300), part(t.row_length() * 7);
  fill_rows(spec, t, 0, 300, all.data());
  fill_rows(spec, t, 101, 7, part.data());
  CHECK(std::memcmp(part.data(), all.data() + 101 * t.row_length(), part.size() * sizeof(float)) == 0);
}

TEST_CASE("write_model to a path reports progress and the size plan_summary predicted") {
  const model_spec spec = small_spec(architecture::qwen2, weight_format::q8_0);
  const vocabulary vocab = byte_level_vocabulary(spec.arch);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tg_synth_test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / "model.gguf";
  std::uint64_t last_done = 0, calls = 0;
  bool monotonic = true;
  write_options options;
  options.threads = 2;
  options.on_progress = [&](const write_progress& p) {
    monotonic = monotonic && p.bytes_done >= last_done && p.bytes_done <= p.bytes_total;
    last_done = p.bytes_done;
    ++calls;
  };
  const write_summary s = write_model(spec, vocab, path, options);
  CHECK(monotonic);
  CHECK(calls >= s.tensor_count);
  CHECK(std::filesystem::file_size(path) == s.file_bytes);
  const write_summary planned = plan_summary(spec, vocab);
  CHECK(planned.file_bytes == s.file_bytes);
  CHECK(planned.parameter_count == s.parameter_count);
  CHECK_FALSE(std::filesystem::exists(dir / "model.gguf.partial"));
  const gguf::file f = gguf::file::open(path);
  std::uint64_t data_bytes = 0;
  for (const auto& t : f.tensors()) data_bytes += t.size_bytes;
  CHECK(last_done == data_bytes);
  std::filesystem::remove_all(dir);
}

TEST_CASE("an invalid spec or an empty vocabulary fails before anything is written") {
  model_spec spec = small_spec(architecture::llama);
  spec.dims.n_head_kv = 3;
  std::ostringstream out;
  CHECK_THROWS_AS(write_model(spec, byte_level_vocabulary(spec.arch), out), usage_error);
  CHECK(out.str().empty());
  CHECK_THROWS_WITH_AS(write_model(small_spec(architecture::llama), vocabulary{}, out),
                       "synth: the vocabulary has no tokens", usage_error);
}

}  // namespace tg::synth
