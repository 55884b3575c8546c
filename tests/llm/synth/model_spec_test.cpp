// model_spec_test.cpp: names, defaults, presets, validation and the per-tensor type mix.
#include <doctest/doctest.h>

#include <vector>

#include "llm/synth/model_presets.hpp"
#include "llm/synth/model_spec.hpp"
#include "llm/synth/type_mix.hpp"

namespace tg::synth {

using gguf::tensor_type;

TEST_CASE("architecture and weight format names parse back to themselves") {
  for (const architecture a : {architecture::llama, architecture::qwen2, architecture::qwen3})
    CHECK(parse_architecture(architecture_name(a)) == a);
  for (const weight_format f : {weight_format::f32, weight_format::f16, weight_format::bf16, weight_format::q8_0,
                                weight_format::q4_0, weight_format::q4_k, weight_format::q5_k, weight_format::q6_k,
                                weight_format::q4_k_m})
    CHECK(parse_weight_format(weight_format_name(f)) == f);
  CHECK(parse_weight_format("q4_k_m") == weight_format::q4_k_m);
  CHECK_THROWS_WITH_AS(parse_architecture("mistral"), "synth: unknown architecture 'mistral' (known: llama, qwen2, qwen3)",
                       usage_error);
  CHECK_THROWS_AS(parse_weight_format("Q3_K"), usage_error);
}

TEST_CASE("general.file_type follows llama.cpp's llama_ftype (include/llama.h)") {
  CHECK(file_type_id(weight_format::f32) == 0);
  CHECK(file_type_id(weight_format::f16) == 1);
  CHECK(file_type_id(weight_format::q8_0) == 7);
  CHECK(file_type_id(weight_format::q4_k_m) == 15);
  CHECK(file_type_id(weight_format::q6_k) == 18);
}

TEST_CASE("default specs carry each family's RoPE theta, epsilon and extras") {
  const model_spec llama = default_spec(architecture::llama), qwen2 = default_spec(architecture::qwen2),
                   qwen3 = default_spec(architecture::qwen3);
  CHECK(llama.dims.rope_theta == 500000.0f);
  CHECK(llama.dims.rms_eps == 1e-5f);
  CHECK(qwen2.dims.rope_theta == 1000000.0f);
  CHECK(qwen2.qkv_bias);
  CHECK_FALSE(qwen3.qkv_bias);
  CHECK(qwen3.dims.rms_eps == 1e-6f);
  CHECK(qwen3.dims.resolved_head_dim() != qwen3.dims.n_embd / qwen3.dims.n_head);
  for (const model_spec& s : {llama, qwen2, qwen3}) CHECK_NOTHROW(validate(s));
}

TEST_CASE("every preset is a valid spec with its published shape") {
  CHECK(model_presets().size() == 10);
  for (const model_preset& p : model_presets()) {
    CAPTURE(p.name);
    CHECK_NOTHROW(validate(spec_from_preset(p)));
  }
  const model_preset* q = find_preset("qwen3-0.6b");
  REQUIRE(q != nullptr);
  CHECK(q->dims.resolved_head_dim() == 128);
  CHECK(q->dims.n_head * q->dims.resolved_head_dim() == 2048);  // wider than n_embd 1024
  CHECK(spec_from_preset(*find_preset("llama3.2-1b")).rope_freqs);
  CHECK_FALSE(spec_from_preset(*find_preset("llama3.1-8b")).tied_output);
  CHECK(find_preset("gpt-5") == nullptr);
}

TEST_CASE("validate names the field that is wrong") {
  model_spec s = default_spec(architecture::llama);
  SUBCASE("zero layers") {
    s.dims.n_layer = 0;
    CHECK_THROWS_WITH_AS(validate(s), "synth: n_layer is 0; it must be at least 1", usage_error);
  }
  SUBCASE("heads not a multiple of kv heads") {
    s.dims.n_head = 6;
    s.dims.n_head_kv = 4;
    CHECK_THROWS_WITH_AS(validate(s),
                         "synth: n_head 6 is not a multiple of n_head_kv 4 (each KV head serves a whole group of "
                         "query heads)",
                         usage_error);
  }
  SUBCASE("width not a multiple of heads") {
    s.dims.n_embd = 100;
    s.dims.n_head = 8;
    s.dims.n_head_kv = 8;
    CHECK_THROWS_WITH_AS(validate(s), "synth: n_embd 100 is not a multiple of n_head 8; set head_dim explicitly",
                         usage_error);
  }
  SUBCASE("odd head size") {
    s.dims.head_dim = 7;
    CHECK_THROWS_WITH_AS(validate(s), "synth: head_dim 7 is odd; RoPE rotates pairs of values", usage_error);
  }
  SUBCASE("negative epsilon") {
    s.dims.rms_eps = -1.0f;
    CHECK_THROWS_WITH_AS(validate(s), "synth: rms_eps is -1; it must be a positive finite number", usage_error);
  }
  SUBCASE("biases outside qwen2") {
    s.qkv_bias = true;
    CHECK_THROWS_WITH_AS(validate(s), "synth: QKV biases are a qwen2 feature; the llama loader does not read them",
                         usage_error);
  }
  SUBCASE("rope_freqs outside llama") {
    s = default_spec(architecture::qwen3);
    s.rope_freqs = true;
    CHECK_THROWS_WITH_AS(validate(s), "synth: rope_freqs.weight is a llama (Llama 3.1+) feature, not qwen3",
                         usage_error);
  }
}

TEST_CASE("use_more_bits picks llama.cpp's layers (src/llama-quant.cpp)") {
  auto layers = [](std::uint32_t n) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t i = 0; i < n; ++i)
      if (uses_more_bits(i, n)) out.push_back(i);
    return out;
  };
  CHECK(layers(16) == std::vector<std::uint32_t>{0, 1, 4, 7, 10, 13, 14, 15});
  CHECK(layers(28) == std::vector<std::uint32_t>{0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 24, 25, 26, 27});
  CHECK(layers(36) == std::vector<std::uint32_t>{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 31, 32, 33, 34, 35});
}

TEST_CASE("Q4_K_M puts the head and the use_more_bits layers' attn_v and ffn_down in Q6_K") {
  const auto q4km = weight_format::q4_k_m;
  CHECK(choose_weight_type(q4km, weight_role::output, false, 0, 16, 2048) == tensor_type::q6_k);
  CHECK(choose_weight_type(q4km, weight_role::token_embd, true, 0, 16, 2048) == tensor_type::q6_k);
  CHECK(choose_weight_type(q4km, weight_role::token_embd, false, 0, 16, 2048) == tensor_type::q4_k);
  CHECK(choose_weight_type(q4km, weight_role::attn_v, true, 4, 16, 2048) == tensor_type::q6_k);
  CHECK(choose_weight_type(q4km, weight_role::attn_v, true, 5, 16, 2048) == tensor_type::q4_k);
  CHECK(choose_weight_type(q4km, weight_role::ffn_down, true, 15, 16, 8192) == tensor_type::q6_k);
  CHECK(choose_weight_type(q4km, weight_role::attn_q, true, 0, 16, 2048) == tensor_type::q4_k);
}

TEST_CASE("rows that are not whole K-quant blocks fall back as llama.cpp does") {
  // Qwen2.5-0.5B's width 896 = 3.5 * 256 (its published config.json).
  CHECK(fallback_weight_type(tensor_type::q4_k, 896) == tensor_type::q5_0);
  CHECK(fallback_weight_type(tensor_type::q6_k, 896) == tensor_type::q8_0);
  CHECK(fallback_weight_type(tensor_type::q5_k, 896) == tensor_type::q5_1);
  CHECK(fallback_weight_type(tensor_type::q4_k, 100) == tensor_type::f16);
  CHECK(fallback_weight_type(tensor_type::q8_0, 100) == tensor_type::f16);
  CHECK(fallback_weight_type(tensor_type::q4_k, 1024) == tensor_type::q4_k);
  CHECK(fallback_weight_type(tensor_type::f32, 7) == tensor_type::f32);
}

}  // namespace tg::synth
