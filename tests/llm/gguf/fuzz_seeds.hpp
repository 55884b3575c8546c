// fuzz_seeds.hpp: valid GGUF files made by the writer, the starting points for fuzzing.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "llm/gguf/gguf_writer.hpp"
#include "tests/llm/gguf/gguf_test_util.hpp"

namespace tg::gguf::test {

inline std::vector<std::vector<std::byte>> fuzz_seeds() {
  using mv = meta_value;
  std::vector<std::vector<std::byte>> seeds;
  seeds.push_back(sample_file());
  seeds.push_back(sample_writer(64).to_bytes());

  {  // every value type, nested arrays included
    writer w;
    w.add("a.u8", mv::u8(1));
    w.add("a.i8", mv::i8(-1));
    w.add("a.u16", mv::u16(2));
    w.add("a.i16", mv::i16(-2));
    w.add("a.u32", mv::u32(3));
    w.add("a.i32", mv::i32(-3));
    w.add("a.f32", mv::f32(0.5f));
    w.add("a.bool", mv::boolean(true));
    w.add("a.str", mv::string("str"));
    w.add("a.u64", mv::u64(4));
    w.add("a.i64", mv::i64(-4));
    w.add("a.f64", mv::f64(0.25));
    w.add("a.nested", mv::array(value_type::array, {mv::array(value_type::string, {mv::string("x")}),
                                                    mv::array(value_type::i16, {mv::i16(5), mv::i16(6)})}));
    seeds.push_back(w.to_bytes());
  }
  {  // a small vocabulary, the shape tokenizers read
    std::vector<std::string> tokens, merges;
    std::vector<float> scores;
    std::vector<std::int32_t> types;
    for (int i = 0; i < 64; ++i) {
      tokens.push_back(std::string(1 + i % 5, static_cast<char>('a' + i % 26)));
      merges.push_back(str(static_cast<char>('a' + i % 26), " ", static_cast<char>('b' + i % 25)));
      scores.push_back(-static_cast<float>(i));
      types.push_back(1 + i % 6);
    }
    writer w;
    w.add("tokenizer.ggml.model", mv::string("gpt2"));
    w.add("tokenizer.ggml.tokens", mv::string_array(tokens));
    w.add("tokenizer.ggml.merges", mv::string_array(merges));
    w.add("tokenizer.ggml.scores", mv::f32_array(scores));
    w.add("tokenizer.ggml.token_type", mv::i32_array(types));
    w.add("tokenizer.ggml.eos_token_id", mv::u32(3));
    seeds.push_back(w.to_bytes());
  }
  {  // one tensor of each dequantizable type, one row each
    writer w(32);
    w.add("general.architecture", mv::string("llama"));
    for (const auto& t : tensor_types) {
      if (!t.dequantizable) continue;
      const std::uint64_t n = t.block_elems == 1 ? 8 : t.block_elems;
      std::vector<std::byte> data(row_size_bytes(t.type, n));
      for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 13 + 1);
      w.add_tensor(std::string(t.name), t.type, {n, 1}, data);
    }
    seeds.push_back(w.to_bytes());
  }
  seeds.push_back(writer().to_bytes());  // header only
  return seeds;
}

}  // namespace tg::gguf::test
