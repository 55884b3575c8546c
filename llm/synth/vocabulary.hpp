// vocabulary.hpp: the tokenizer.* metadata a synthetic model carries, copied or built in.
//
// A vocabulary is kept as the GGUF key/value pairs themselves, so copying one from a file
// preserves every key (tokens, scores, token types, merges, model and pre-tokenizer names,
// special ids, add_bos/add_eos, chat template) with its stored type.
//
//   auto source = tg::gguf::file::open("ggml-vocab-llama-spm.gguf");
//   tg::synth::vocabulary vocab = tg::synth::copy_vocabulary(source);
//   tg::synth::pad_vocabulary(vocab, 32064);
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llm/gguf/gguf_file.hpp"
#include "llm/gguf/gguf_writer.hpp"
#include "llm/synth/model_spec.hpp"

namespace tg::synth {

struct vocabulary {
  std::vector<std::pair<std::string, gguf::meta_value>> keys;  // tokenizer.* keys, in order
  std::uint64_t token_count = 0;  // length of tokenizer.ggml.tokens: the embedding's row count

  const gguf::meta_value* find(std::string_view key) const;  // nullptr when absent
};

// Every key of `source` that starts with "tokenizer.". Throws usage_error when the file has no
// tokenizer.ggml.tokens array of strings.
vocabulary copy_vocabulary(const gguf::file& source);

// A byte-level BPE vocabulary that needs no file: the 256 byte tokens (GPT-2 byte-to-character
// mapping, GPT-2's bytes_to_unicode, in GPT-2's id order), a few dozen English merges, and control tokens.
// The family decides the rest: llama gets pre "llama-bpe", BOS <|begin_of_text|> (added) and
// EOS <|eot_id|> plus the header tokens; qwen2/qwen3 get pre "qwen2", <|endoftext|> as BOS (not
// added) and padding, EOS <|im_end|> and <|im_start|>. So chat prompts tokenize with the
// families' fallback templates (tinygrad/llm/cli.py: FallbackTemplate).
vocabulary byte_level_vocabulary(architecture arch);

// Appends unused tokens "[PADn]" (token type 5, score 0) until the vocabulary has `size`
// tokens, as Qwen's files are padded to the embedding size. Throws usage_error when `size` is
// smaller than the vocabulary.
void pad_vocabulary(vocabulary& vocab, std::uint64_t size);

// A metadata value read from a file, as a writer value with the same type.
gguf::meta_value to_meta_value(const gguf::value& v);

}  // namespace tg::synth
