// byte_vocabulary.cpp: the built-in byte-level BPE vocabulary (no file needed).
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <tg/core/error.hpp>

#include "llm/synth/vocabulary.hpp"

namespace tg::synth {

using gguf::meta_value;

namespace {

constexpr std::int32_t normal_token = 1, control_token = 3;  // token types, gguf-py/gguf/constants.py: TokenType

// Bytes that GPT-2's mapping keeps as their own code point (llama.cpp src/unicode.cpp: unicode_byte_to_utf8_map).
bool is_printable_byte(int b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174; }

std::string utf8(std::uint32_t code_point) {
  std::string out;
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | code_point >> 6);
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    TG_UNREACHABLE("byte-level characters are below U+0800");
  }
  return out;
}

// GPT-2's order: the printable bytes as themselves, then the other 68 bytes in increasing
// order as U+0100, U+0101, ... So id order is the order of the characters' code points.
std::vector<std::string> byte_tokens() {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b)
    if (is_printable_byte(b)) tokens.push_back(utf8(static_cast<std::uint32_t>(b)));
  std::uint32_t next = 0x100;
  for (int b = 0; b < 256; ++b)
    if (!is_printable_byte(b)) tokens.push_back(utf8(next++));
  return tokens;
}

// Common English pairs, in priority order. Each part exists before the merge that uses it, and
// merged tokens get ids in merge order, so lowest-id merging (tinygrad) and merge-rank merging
// (llama.cpp) agree. "Ġ" is the space byte.
constexpr std::array<std::string_view, 30> english_merges{
    "Ġ t", "h e", "Ġ a", "i n", "Ġt he", "e r", "o n", "Ġ s", "r e", "a t",
    "e n", "o r", "Ġ w", "Ġ o", "a n", "i s", "e s", "Ġ c", "in g", "Ġ b",
    "l l", "e d", "Ġ f", "Ġ m", "o u", "Ġ p", "Ġ H", "Ġ i", "Ġ d", "l e",
};

struct family_tokens {
  std::string_view pre;
  std::vector<std::string_view> control;  // appended after the merges, in this order
  std::string_view bos, eos;
  bool add_bos;
  bool bos_is_padding;
};

family_tokens tokens_for(architecture arch) {
  if (arch == architecture::llama)
    return {"llama-bpe",
            {"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"},
            "<|begin_of_text|>", "<|eot_id|>", true, false};
  return {"qwen2", {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}, "<|endoftext|>", "<|im_end|>", false, true};
}

std::uint32_t index_of(const std::vector<std::string>& tokens, std::string_view text) {
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] == text) return static_cast<std::uint32_t>(i);
  TG_UNREACHABLE("built-in vocabulary lacks one of its own tokens");
}

}  // namespace

vocabulary byte_level_vocabulary(architecture arch) {
  const family_tokens family = tokens_for(arch);
  std::vector<std::string> tokens = byte_tokens();
  std::vector<std::string> merges;
  for (const std::string_view m : english_merges) {
    const std::size_t space = m.find(' ');
    merges.emplace_back(m);
    tokens.push_back(std::string(m.substr(0, space)) + std::string(m.substr(space + 1)));
  }
  std::vector<std::int32_t> types(tokens.size(), normal_token);
  for (const std::string_view c : family.control) {
    tokens.emplace_back(c);
    types.push_back(control_token);
  }
  const std::uint32_t bos = index_of(tokens, family.bos), eos = index_of(tokens, family.eos);

  vocabulary vocab;
  vocab.token_count = tokens.size();
  auto add = [&](std::string key, meta_value v) { vocab.keys.emplace_back(std::move(key), std::move(v)); };
  add("tokenizer.ggml.model", meta_value::string("gpt2"));
  add("tokenizer.ggml.pre", meta_value::string(std::string(family.pre)));
  add("tokenizer.ggml.tokens", meta_value::string_array(tokens));
  add("tokenizer.ggml.token_type", meta_value::i32_array(types));
  add("tokenizer.ggml.merges", meta_value::string_array(merges));
  add("tokenizer.ggml.bos_token_id", meta_value::u32(bos));
  add("tokenizer.ggml.eos_token_id", meta_value::u32(eos));
  if (family.bos_is_padding) add("tokenizer.ggml.padding_token_id", meta_value::u32(bos));
  add("tokenizer.ggml.add_bos_token", meta_value::boolean(family.add_bos));
  add("tokenizer.ggml.add_eos_token", meta_value::boolean(false));
  return vocab;
}

}  // namespace tg::synth
