// tokenizer.hpp: text <-> token ids for SentencePiece and byte-level BPE vocabularies.
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llm/tokenizer/bpe_encoder.hpp"
#include "llm/tokenizer/special_tokens.hpp"
#include "llm/tokenizer/spm_encoder.hpp"
#include "llm/tokenizer/utf8_stream.hpp"
#include "llm/tokenizer/vocabulary.hpp"

namespace tg::gguf {
class file;
}

namespace tg::tokenizer {

// Built once from a vocabulary (move-only); const methods are safe to call from several threads.
//
//   auto tok = tg::tokenizer::tokenizer::from_gguf(tg::gguf::file::open(path));
//   std::vector<token_id> ids = tok.encode("Hello world", /*add_bos=*/true, /*parse_special=*/false);
//   std::string text = tok.decode(ids);
//
// Defaults for what the vocabulary leaves unset follow llama.cpp: SentencePiece has BOS 1,
// EOS 2, UNK 0, adds BOS and a space prefix; byte-level BPE adds BOS for the llama3 preset
// only; EOT is found by name (<|eot_id|>, <|im_end|>, ...) when not given.
class tokenizer {
 public:
  enum class kind { sentencepiece, byte_level_bpe };

  explicit tokenizer(vocabulary vocab);
  static tokenizer from_gguf(const tg::gguf::file& file);

  // Text -> ids. add_bos: prepend BOS (and append EOS) if the vocabulary asks for it.
  // parse_special: turn control-token text such as "<|im_start|>" into its id; without it
  // that text is tokenized as plain text. User-defined tokens are matched either way.
  std::vector<token_id> encode(std::string_view text, bool add_bos, bool parse_special) const;

  // Ids -> bytes (not necessarily valid UTF-8 when the ids end mid-character). Control and
  // unknown tokens render as their text only with render_special. For SentencePiece the
  // space that encode() prefixes is removed from the first token, so decode(encode(s)) == s.
  std::string decode(std::span<const token_id> ids, bool render_special = false) const;

  // One token's bytes as they continue a text (no space removal); see decode().
  std::string_view token_bytes(token_id id, bool render_special = false) const;

  // The token's text as the vocabulary stores it (byte-level or U+2581 spelling).
  const std::string& token_text(token_id id) const;

  // The id of a token with exactly this stored text, or no_token. A linear scan: meant for
  // looking up a few names, not for text.
  token_id find_token(std::string_view text) const;

  // EOS, EOT, EOM and any token named like an end of turn (llama.cpp's special_eog_ids, src/llama-vocab.cpp,
  // plus <|end_of_text|>).
  bool is_end_of_generation(token_id id) const;
  bool is_control(token_id id) const;

  kind model() const { return kind_; }
  std::size_t size() const { return vocab_.tokens.size(); }
  std::optional<token_id> bos() const { return vocab_.bos_id; }
  std::optional<token_id> eos() const { return vocab_.eos_id; }
  std::optional<token_id> eot() const { return vocab_.eot_id; }
  bool adds_bos() const { return *vocab_.add_bos; }
  // The vocabulary with every default filled in.
  const vocabulary& vocab() const { return vocab_; }

 private:
  void check_id(token_id id, const char* operation) const;

  vocabulary vocab_;
  kind kind_;
  std::optional<bpe_encoder> bpe_;
  std::optional<spm_encoder> spm_;
  special_token_matcher specials_;
  std::vector<std::string> pieces_;        // each token's bytes
  std::vector<bool> end_of_generation_;
};

// Turns ids into text as they are generated, emitting only complete UTF-8 characters. It keeps
// a pointer to the tokenizer, which must outlive it.
//
//   tg::tokenizer::stream_decoder stream(tok);
//   for (token_id id : generated) std::cout << stream.push(id) << std::flush;
//   std::cout << stream.flush();
class stream_decoder {
 public:
  explicit stream_decoder(const tokenizer& tok, bool render_special = false)
      : tokenizer_(&tok), render_special_(render_special) {}

  std::string push(token_id id);
  std::string flush();

 private:
  const tokenizer* tokenizer_;
  bool render_special_;
  utf8_stream utf8_;
};

}  // namespace tg::tokenizer
