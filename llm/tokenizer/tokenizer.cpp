// tokenizer.cpp: defaults, special-token handling and decoding around the two encoders.
#include "llm/tokenizer/tokenizer.hpp"

#include <algorithm>

#include <tg/core/error.hpp>
#include "llm/tokenizer/byte_level.hpp"

namespace tg::tokenizer {

namespace {

constexpr std::string_view space_marker = "\xE2\x96\x81";  // U+2581

// Token texts that end a reply (llama.cpp's list, plus Llama 3 base models' EOS).
constexpr std::string_view end_of_turn_names[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|eom_id|>", "<EOT>",      "<|end_of_text|>"};

tokenizer::kind kind_of(const vocabulary& vocab) {
  if (vocab.model == "llama") return tokenizer::kind::sentencepiece;
  if (vocab.model == "gpt2") return tokenizer::kind::byte_level_bpe;
  throw usage_error(str("tokenizer: model '", vocab.model,
                        "' is not supported (expected 'llama' for SentencePiece or 'gpt2' for byte-level BPE)"));
}

void check_sizes(const vocabulary& vocab) {
  if (vocab.tokens.empty()) throw usage_error("tokenizer: the vocabulary has no tokens");
  if (!vocab.types.empty() && vocab.types.size() != vocab.tokens.size())
    throw usage_error(str("tokenizer: ", vocab.types.size(), " token types for ", vocab.tokens.size(),
                          " tokens (the file's tokenizer.ggml.token_type does not match its tokens)"));
  if (!vocab.scores.empty() && vocab.scores.size() != vocab.tokens.size())
    throw usage_error(str("tokenizer: ", vocab.scores.size(), " scores for ", vocab.tokens.size(),
                          " tokens (the file's tokenizer.ggml.scores does not match its tokens)"));
}

token_id find_text(const vocabulary& vocab, std::string_view text) {
  const auto it = std::find(vocab.tokens.begin(), vocab.tokens.end(), text);
  return it == vocab.tokens.end() ? no_token : token_id(it - vocab.tokens.begin());
}

// Fills in what the file left unset, the way llama.cpp does.
vocabulary with_defaults(vocabulary vocab, tokenizer::kind kind) {
  if (kind == tokenizer::kind::sentencepiece) {
    if (!vocab.bos_id) vocab.bos_id = 1;
    if (!vocab.eos_id) vocab.eos_id = 2;
    if (!vocab.unk_id) vocab.unk_id = 0;
    if (!vocab.add_bos) vocab.add_bos = true;
    if (!vocab.add_space_prefix) vocab.add_space_prefix = true;
  } else {
    if (!vocab.add_bos)
      vocab.add_bos = pre_tokenizer_kind_from_name(vocab.pre) == pre_tokenizer_kind::llama3 && vocab.bos_id;
    vocab.add_space_prefix = false;
  }
  if (!vocab.add_eos) vocab.add_eos = false;
  if (!vocab.eot_id) {
    for (const std::string_view name : {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>"}) {
      if (const token_id id = find_text(vocab, name); id != no_token) {
        vocab.eot_id = id;
        break;
      }
    }
  }
  for (const auto* field : {&vocab.bos_id, &vocab.eos_id, &vocab.eot_id, &vocab.eom_id, &vocab.unk_id, &vocab.pad_id})
    if (*field && !vocab.contains(**field))
      throw usage_error(str("tokenizer: special token id ", **field, " is outside the vocabulary of ",
                            vocab.tokens.size(), " tokens"));
  if (*vocab.add_bos && !vocab.bos_id)
    throw usage_error("tokenizer: the vocabulary asks to add BOS but names no BOS token");
  if (*vocab.add_eos && !vocab.eos_id)
    throw usage_error("tokenizer: the vocabulary asks to add EOS but names no EOS token");
  return vocab;
}

vocabulary prepare(vocabulary vocab) {
  check_sizes(vocab);
  const tokenizer::kind kind = kind_of(vocab);
  return with_defaults(std::move(vocab), kind);
}

std::string piece_of(const vocabulary& vocab, tokenizer::kind kind, token_id id) {
  const std::string& text = vocab.tokens[std::size_t(id)];
  switch (vocab.type_of(id)) {
    case token_type::control:
    case token_type::user_defined: return text;
    case token_type::byte:
      // "<0xNN>": the byte itself.
      if (text.size() == 6 && text.starts_with("<0x") && text.ends_with(">"))
        return std::string(1, char(std::stoi(text.substr(3, 2), nullptr, 16)));
      return text;
    default: break;
  }
  if (kind == tokenizer::kind::byte_level_bpe) return byte_level::decode(text);
  std::string out;
  for (std::size_t pos = 0; pos < text.size();) {
    if (std::string_view(text).substr(pos).starts_with(space_marker)) {
      out += ' ';
      pos += space_marker.size();
    } else {
      out += text[pos++];
    }
  }
  return out;
}

}  // namespace

tokenizer::tokenizer(vocabulary vocab)
    : vocab_(prepare(std::move(vocab))),
      kind_(kind_of(vocab_)),
      specials_(vocab_) {
  if (kind_ == kind::byte_level_bpe)
    bpe_.emplace(vocab_, pre_tokenizer_kind_from_name(vocab_.pre));
  else
    spm_.emplace(vocab_);
  pieces_.reserve(vocab_.tokens.size());
  end_of_generation_.assign(vocab_.tokens.size(), false);
  for (std::size_t id = 0; id < vocab_.tokens.size(); ++id) {
    pieces_.push_back(piece_of(vocab_, kind_, token_id(id)));
    const bool named_end = vocab_.type_of(token_id(id)) != token_type::normal &&
                           std::find(std::begin(end_of_turn_names), std::end(end_of_turn_names),
                                     vocab_.tokens[id]) != std::end(end_of_turn_names);
    end_of_generation_[id] = named_end;
  }
  for (const auto& id : {vocab_.eos_id, vocab_.eot_id, vocab_.eom_id})
    if (id) end_of_generation_[std::size_t(*id)] = true;
}

void tokenizer::check_id(token_id id, const char* operation) const {
  if (!vocab_.contains(id))
    throw usage_error(str("tokenizer: ", operation, ": token id ", id, " is outside the vocabulary of ",
                          vocab_.tokens.size(), " tokens"));
}

std::vector<token_id> tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<token_id> out;
  out.reserve(text.size() / 3 + 2);
  if (add_bos && *vocab_.add_bos) out.push_back(*vocab_.bos_id);
  // SentencePiece prefixes a space to the text at the start and after each special token.
  bool after_special = true;
  for (const fragment& f : specials_.split(text, parse_special)) {
    if (f.special != no_token) {
      out.push_back(f.special);
      after_special = true;
      continue;
    }
    if (bpe_)
      bpe_->encode(f.text, out);
    else
      spm_->encode(f.text, *vocab_.add_space_prefix && after_special, out);
    after_special = false;
  }
  if (add_bos && *vocab_.add_eos) out.push_back(*vocab_.eos_id);
  return out;
}

std::string_view tokenizer::token_bytes(token_id id, bool render_special) const {
  check_id(id, "token_bytes");
  const token_type type = vocab_.type_of(id);
  if (!render_special && (type == token_type::control || type == token_type::unknown)) return {};
  return pieces_[std::size_t(id)];
}

std::string tokenizer::decode(std::span<const token_id> ids, bool render_special) const {
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::string_view piece = token_bytes(ids[i], render_special);
    // Undo encode()'s space prefix: llama.cpp drops a leading space of the first token only.
    if (i == 0 && *vocab_.add_space_prefix && piece.starts_with(' ')) piece.remove_prefix(1);
    out += piece;
  }
  return out;
}

const std::string& tokenizer::token_text(token_id id) const {
  check_id(id, "token_text");
  return vocab_.tokens[std::size_t(id)];
}

token_id tokenizer::find_token(std::string_view text) const { return find_text(vocab_, text); }

bool tokenizer::is_end_of_generation(token_id id) const {
  return vocab_.contains(id) && end_of_generation_[std::size_t(id)];
}

bool tokenizer::is_control(token_id id) const {
  return vocab_.contains(id) && vocab_.type_of(id) == token_type::control;
}

std::string stream_decoder::push(token_id id) { return utf8_.push(tokenizer_->token_bytes(id, render_special_)); }

std::string stream_decoder::flush() { return utf8_.flush(); }

}  // namespace tg::tokenizer
