// synth_fixtures_test.cpp: synthetic models against the shared fixtures: the tiny-llama models
// llama.cpp's tools wrote, the llama-spm vocabulary, and llama-quantize's blocks.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/support/fixtures.hpp"
#include "llm/gguf/dequant_reference.hpp"
#include "llm/gguf/gguf_file.hpp"
#include "llm/synth/quantize.hpp"
#include "llm/synth/vocabulary.hpp"
#include "tests/llm/synth/synth_test_util.hpp"

namespace tg::synth {
namespace {

using gguf::tensor_type;

gguf::file open_fixture(const std::string& relative) { return gguf::file::open(tg::test::fixture(relative)); }

// The shape of models/tiny-llama-f32.gguf, from the fixtures README.
model_spec tiny_llama_spec(weight_format format) {
  model_spec spec = default_spec(architecture::llama);
  spec.name = "tiny-llama";
  spec.dims = {256, 4, 8, 4, 768, 0, 512, 10000.0f, 1e-5f};
  spec.format = format;
  spec.seed = 1234;
  return spec;
}

std::vector<std::string_view> keys_of(const gguf::file& f) {
  std::vector<std::string_view> keys;
  for (const auto& e : f.metadata()) keys.push_back(e.key);
  return keys;
}

// Same type and same stored bytes (strings compared as text).
bool same_value(const gguf::value& a, const gguf::value& b) {
  if (a.type() != b.type()) return false;
  if (!a.is_array()) return a.type() == gguf::value_type::string ? a.to_string() == b.to_string() : a.bits() == b.bits();
  if (a.element_type() != b.element_type() || a.size() != b.size()) return false;
  if (a.element_type() == gguf::value_type::string) {
    const auto sa = a.strings(), sb = b.strings();
    return std::equal(sa.begin(), sa.end(), sb.begin());
  }
  const auto ra = a.raw_elements(), rb = b.raw_elements();
  return ra.size() == rb.size() && std::memcmp(ra.data(), rb.data(), ra.size()) == 0;
}

void check_tensors_match(const gguf::file& ours, const gguf::file& theirs, bool check_types) {
  REQUIRE(ours.tensors().size() == theirs.tensors().size());
  for (const gguf::tensor_info& t : theirs.tensors()) {
    CAPTURE(t.name);
    const gguf::tensor_info* mine = ours.find_tensor(t.name);
    REQUIRE(mine != nullptr);
    CHECK(mine->n_dims == t.n_dims);
    CHECK(mine->ne == t.ne);
    if (check_types) CHECK(gguf::tensor_type_name(mine->type) == gguf::tensor_type_name(t.type));
  }
}

}  // namespace

TEST_CASE("copying the llama-spm vocabulary preserves every tokenizer key and its type") {
  const gguf::file source = open_fixture("tokenizer/ggml-vocab-llama-spm.gguf");
  const vocabulary vocab = copy_vocabulary(source);
  CHECK(vocab.token_count == 32000);
  model_spec spec = default_spec(architecture::llama);
  spec.dims.n_layer = 1;
  const auto m = test::write_and_open(spec, vocab);
  int tokenizer_keys = 0;
  for (const auto& e : source.metadata()) {
    if (!e.key.starts_with("tokenizer.")) continue;
    ++tokenizer_keys;
    CAPTURE(e.key);
    const gguf::value* copied = m->file.find(e.key);
    REQUIRE(copied != nullptr);
    CHECK(same_value(*copied, e.val));
  }
  CHECK(tokenizer_keys == 10);
  CHECK(m->file.get_tensor("token_embd.weight").ne[1] == 32000);
  CHECK(m->file.get_u32("llama.vocab_size") == 32000);
}

TEST_CASE("a model with tiny-llama's dims has the fixture's tensors and metadata keys, in order") {
  const gguf::file fixture = open_fixture("models/tiny-llama-f32.gguf");
  const vocabulary vocab = copy_vocabulary(open_fixture("tokenizer/ggml-vocab-llama-spm.gguf"));
  const auto m = test::write_and_open(tiny_llama_spec(weight_format::f32), vocab);
  CHECK(keys_of(m->file) == keys_of(fixture));
  for (const auto& e : fixture.metadata()) {
    if (e.key == "general.description") continue;  // names the tool that wrote the file
    CAPTURE(e.key);
    CHECK(same_value(*m->file.find(e.key), e.val));
  }
  check_tensors_match(m->file, fixture, true);
  // The same order as gguf-py wrote them.
  for (std::size_t i = 0; i < fixture.tensors().size(); ++i)
    CHECK(m->file.tensors()[i].name == fixture.tensors()[i].name);
}

TEST_CASE("Q8_0 and Q4_K_M models get the tensor types llama-quantize chose for the tiny models") {
  const vocabulary vocab = copy_vocabulary(open_fixture("tokenizer/ggml-vocab-llama-spm.gguf"));
  SUBCASE("Q8_0") {
    const gguf::file fixture = open_fixture("models/tiny-llama-q8_0.gguf");
    const auto m = test::write_and_open(tiny_llama_spec(weight_format::q8_0), vocab);
    check_tensors_match(m->file, fixture, true);
    CHECK(m->file.get_u32("general.file_type") == fixture.get_u32("general.file_type"));
    CHECK(m->file.get_u32("general.quantization_version") == 2);
  }
  SUBCASE("Q4_K_M") {
    const gguf::file fixture = open_fixture("models/tiny-llama-q4_k_m.gguf");
    const auto m = test::write_and_open(tiny_llama_spec(weight_format::q4_k_m), vocab);
    check_tensors_match(m->file, fixture, true);
    CHECK(m->file.get_u32("general.file_type") == fixture.get_u32("general.file_type"));
  }
}

TEST_CASE("our quantizers agree with llama-quantize: legacy types bit for bit, K-quants within bounds") {
  // quant-golden.gguf holds llama-quantize --pure's blocks for blk.0.ffn_up.weight of the F32
  // tiny model (fixtures README), and their dequantization.
  const gguf::file model = open_fixture("models/tiny-llama-f32.gguf");
  const gguf::file golden = open_fixture("quant/quant-golden.gguf");
  const gguf::tensor_info& source = model.get_tensor("blk.0.ffn_up.weight");
  std::vector<float> input(source.element_count());
  std::memcpy(input.data(), model.tensor_data(source), input.size() * sizeof(float));
  const std::size_t row = source.ne[0];

  struct expectation {
    tensor_type type;
    bool bit_exact;
    double max_error_ratio;  // our relative RMS error / llama.cpp's
  };
  // K-quant ratios measured: Q4_K 1.10, Q5_K 1.06, Q6_K 1.06 (llama.cpp searches for scales).
  const expectation expectations[] = {
      {tensor_type::f16, true, 1.0},   {tensor_type::bf16, true, 1.0},  {tensor_type::q8_0, true, 1.0},
      {tensor_type::q4_0, true, 1.0},  {tensor_type::q4_1, true, 1.0},  {tensor_type::q5_0, true, 1.0},
      {tensor_type::q5_1, true, 1.0},  {tensor_type::q4_k, false, 1.25}, {tensor_type::q5_k, false, 1.2},
      {tensor_type::q6_k, false, 1.2},
  };
  for (const expectation& e : expectations) {
    const std::string name(gguf::tensor_type_name(e.type));
    CAPTURE(name);
    const gguf::tensor_info& theirs = golden.get_tensor(name + ".q");
    REQUIRE(theirs.type == e.type);
    std::vector<std::byte> ours(theirs.size_bytes);
    const std::uint64_t row_bytes = gguf::row_size_bytes(e.type, row);
    for (std::uint64_t r = 0; r < source.row_count(); ++r)
      quantize_row(e.type, input.data() + r * row, ours.data() + r * row_bytes, row);
    if (e.bit_exact) {
      CHECK(std::memcmp(ours.data(), golden.tensor_data(theirs), ours.size()) == 0);
      continue;
    }
    std::vector<float> our_values(input.size());
    for (std::uint64_t r = 0; r < source.row_count(); ++r)
      gguf::dequantize_row(e.type, ours.data() + r * row_bytes, our_values.data() + r * row, row);
    const std::vector<float> their_values = test::dequantized(golden, name + ".f32");
    const double ratio =
        test::relative_rms_error(our_values, input) / test::relative_rms_error(their_values, input);
    CHECK(ratio <= e.max_error_ratio);
  }
}

}  // namespace tg::synth
