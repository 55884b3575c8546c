// gguf_fixtures_test.cpp: reading real GGUF files: the tiny models and the vocabularies.
//
// Expected values were read from the fixture files with an independent script and agree with
// $TG_FIXTURES/README.md (model shape, vocabulary sizes).
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "tests/support/fixtures.hpp"
#include "llm/gguf/gguf_file.hpp"

namespace tg::gguf {
namespace {

file open_fixture(const std::string& relative) { return file::open(test::fixture(relative)); }

std::map<tensor_type, int> count_types(const file& f) {
  std::map<tensor_type, int> counts;
  for (const auto& t : f.tensors()) ++counts[t.type];
  return counts;
}

std::set<std::string_view> tensor_names(const file& f) {
  std::set<std::string_view> names;
  for (const auto& t : f.tensors()) names.insert(t.name);
  return names;
}

}  // namespace

TEST_CASE("the tiny F32 model's metadata matches its published shape") {
  const file f = open_fixture("models/tiny-llama-f32.gguf");
  CHECK(f.version() == 3);
  CHECK(f.alignment() == 32);
  CHECK(f.metadata().size() == 24);
  CHECK(f.get_string("general.architecture") == "llama");
  CHECK(f.get_string("general.name") == "tiny-llama");
  CHECK(f.get_u32("llama.embedding_length") == 256);
  CHECK(f.get_u32("llama.block_count") == 4);
  CHECK(f.get_u32("llama.attention.head_count") == 8);
  CHECK(f.get_u32("llama.attention.head_count_kv") == 4);
  CHECK(f.get_u32("llama.feed_forward_length") == 768);
  CHECK(f.get_u64("llama.context_length") == 512);
  CHECK(f.get_f32("llama.rope.freq_base") == 10000.0f);
  CHECK(f.get_f32("llama.attention.layer_norm_rms_epsilon") == 1e-5f);
  CHECK(f.get_u32("tokenizer.ggml.bos_token_id") == 1);
  CHECK(f.get_bool("tokenizer.ggml.add_bos_token"));
  CHECK_FALSE(f.get_bool("tokenizer.ggml.add_eos_token"));
  CHECK(f.get_string_array("tokenizer.ggml.tokens").size() == 32000);
  CHECK(f.get_f32_array("tokenizer.ggml.scores").size() == 32000);
  CHECK(f.get_i32_array("tokenizer.ggml.token_type").size() == 32000);
}

TEST_CASE("the tiny F32 model lists its 38 tensors with ggml's dimension order") {
  const file f = open_fixture("models/tiny-llama-f32.gguf");
  REQUIRE(f.tensors().size() == 38);
  CHECK(count_types(f) == std::map<tensor_type, int>{{tensor_type::f32, 38}});
  const tensor_info& embd = f.get_tensor("token_embd.weight");
  CHECK(embd.n_dims == 2);
  CHECK(embd.ne[0] == 256);    // the row: one embedding
  CHECK(embd.ne[1] == 32000);  // one row per token
  CHECK(embd.size_bytes == 256u * 32000u * 4u);
  CHECK(f.find_tensor("output.weight") == nullptr);  // tied to token_embd
  const tensor_info& down = f.get_tensor("blk.3.ffn_down.weight");
  CHECK(down.ne[0] == 768);
  CHECK(down.ne[1] == 256);
  CHECK(f.get_tensor("blk.0.attn_norm.weight").n_dims == 1);
  for (const auto& t : f.tensors()) {
    CAPTURE(t.name);
    CHECK(f.data_offset() + t.offset + t.size_bytes <= f.bytes().size());
    CHECK(t.offset % f.alignment() == 0);
  }
}

TEST_CASE("the quantized tiny models hold the same tensors in llama.cpp's type mix") {
  const file f32 = open_fixture("models/tiny-llama-f32.gguf");
  const file q8 = open_fixture("models/tiny-llama-q8_0.gguf");
  const file q4km = open_fixture("models/tiny-llama-q4_k_m.gguf");
  CHECK(tensor_names(q8) == tensor_names(f32));
  CHECK(tensor_names(q4km) == tensor_names(f32));
  CHECK(count_types(q8) == std::map<tensor_type, int>{{tensor_type::f32, 9}, {tensor_type::q8_0, 29}});
  CHECK(count_types(q4km) ==
        std::map<tensor_type, int>{{tensor_type::f32, 9}, {tensor_type::q4_k, 24}, {tensor_type::q6_k, 5}});
  CHECK(q4km.get_tensor("token_embd.weight").type == tensor_type::q6_k);  // tied output: more bits
  CHECK(q4km.get_u32("general.file_type") == 15);
  CHECK(q4km.get_u32("general.quantization_version") == 2);
  CHECK(q8.get_u32("general.file_type") == 7);
}

TEST_CASE("the SentencePiece vocabulary reads with scores and byte tokens") {
  const file f = open_fixture("tokenizer/ggml-vocab-llama-spm.gguf");
  CHECK(f.tensors().empty());
  CHECK(f.get_string("tokenizer.ggml.model") == "llama");
  const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  REQUIRE(tokens.size() == 32000);
  CHECK(tokens[1] == "<s>");
  CHECK(tokens[3] == "<0x00>");
  CHECK(tokens[29871] == "\xe2\x96\x81");  // U+2581, SentencePiece's space
  const auto types = f.get_i32_array("tokenizer.ggml.token_type");
  CHECK(types[0] == 2);  // unknown
  CHECK(types[3] == 6);  // byte
  CHECK(f.get_f32_array("tokenizer.ggml.scores")[31999] == -31740.0f);
  CHECK(f.get_u32("llama.block_count") == 32);
}

TEST_CASE("the byte-level BPE vocabularies read with their merges and special tokens") {
  SUBCASE("gpt-2") {
    const file f = open_fixture("tokenizer/ggml-vocab-gpt-2.gguf");
    CHECK(f.get_string("general.architecture") == "gpt2");
    CHECK(f.get_string_array("tokenizer.ggml.tokens").size() == 50257);
    CHECK(f.get_string_array("tokenizer.ggml.tokens")[50256] == "<|endoftext|>");
    CHECK(f.get_string_array("tokenizer.ggml.merges").size() == 50000);
    CHECK(f.get_string_array("tokenizer.ggml.merges")[0] == "\xc4\xa0 t");
    CHECK(f.get_u32("tokenizer.ggml.eos_token_id") == 50256);
  }
  SUBCASE("llama-bpe") {
    const file f = open_fixture("tokenizer/ggml-vocab-llama-bpe.gguf");
    CHECK(f.get_string("tokenizer.ggml.pre") == "llama-bpe");
    const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
    REQUIRE(tokens.size() == 128256);
    CHECK(tokens[128000] == "<|begin_of_text|>");
    CHECK(tokens[128009] == "<|eot_id|>");
    CHECK(f.get_i32_array("tokenizer.ggml.token_type")[128000] == 3);
    CHECK(f.get_string_array("tokenizer.ggml.merges").size() == 280147);
    CHECK(f.get_u32("tokenizer.ggml.bos_token_id") == 128000);
    CHECK(f.get_bool("tokenizer.ggml.add_bos_token"));
  }
  SUBCASE("qwen2") {
    const file f = open_fixture("tokenizer/ggml-vocab-qwen2.gguf");
    CHECK(f.get_string("tokenizer.ggml.pre") == "qwen2");
    const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
    REQUIRE(tokens.size() == 151669);
    CHECK(tokens[151643] == "<|endoftext|>");
    CHECK(tokens[151645] == "<|im_end|>");
    CHECK(tokens.back() == "</think>");
    CHECK(f.get_string_array("tokenizer.ggml.merges").size() == 151387);
    CHECK(f.get_u32("tokenizer.ggml.eos_token_id") == 151645);
    CHECK_FALSE(f.get_bool("tokenizer.ggml.add_bos_token"));
    CHECK(f.get_string("tokenizer.chat_template").starts_with("{%- if tools %}"));
    CHECK_FALSE(f.find_u32("tokenizer.ggml.bos_token_id").has_value());
  }
}

}  // namespace tg::gguf
