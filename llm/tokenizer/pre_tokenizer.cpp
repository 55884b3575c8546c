// pre_tokenizer.cpp: the preset regexes, compiled with PCRE2 (UTF + UCP, JIT when available).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "llm/tokenizer/pre_tokenizer.hpp"

#include <pcre2.h>

#include <string>

#include <tg/core/error.hpp>

namespace tg::tokenizer {

namespace {

// PCRE2's \s with UCP is category Z plus \t\n\v\f\r; Hugging Face's (Oniguruma's) \s is the
// Unicode White_Space set, which adds U+0085. Spell the set out so the two agree.
#define TG_WS "\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"

// The contractions, matched in any letter case as llama.cpp spells them (explicit classes
// rather than (?i), which would also fold U+017F and the Kelvin sign).
#define TG_CONTRACTIONS_ANY_CASE "'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])"

// Hugging Face's Llama 3 pattern; qwen2 differs only in taking one number at a time.
#define TG_LLAMA3_LIKE(numbers)                                                     \
  TG_CONTRACTIONS_ANY_CASE "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" numbers "| ?[^" TG_WS \
  "\\p{L}\\p{N}]+[\\r\\n]*|[" TG_WS "]*[\\r\\n]+|[" TG_WS "]+(?![^" TG_WS "])|[" TG_WS "]+"

constexpr const char* llama3_pattern = TG_LLAMA3_LIKE("\\p{N}{1,3}");
constexpr const char* qwen2_pattern = TG_LLAMA3_LIKE("\\p{N}");
constexpr const char* gpt2_pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" TG_WS "\\p{L}\\p{N}]+|[" TG_WS
    "]+(?![^" TG_WS "])|[" TG_WS "]+";

#undef TG_LLAMA3_LIKE
#undef TG_CONTRACTIONS_ANY_CASE
#undef TG_WS

const char* pattern_of(pre_tokenizer_kind kind) {
  switch (kind) {
    case pre_tokenizer_kind::llama3: return llama3_pattern;
    case pre_tokenizer_kind::qwen2: return qwen2_pattern;
    case pre_tokenizer_kind::gpt2: return gpt2_pattern;
  }
  TG_UNREACHABLE("unknown pre_tokenizer_kind");
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

struct match_data_deleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

}  // namespace

struct pre_tokenizer::compiled {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~compiled() { pcre2_code_free(code); }
};

pre_tokenizer_kind pre_tokenizer_kind_from_name(std::string_view name) {
  if (name == "llama-bpe" || name == "llama3" || name == "llama-v3") return pre_tokenizer_kind::llama3;
  if (name == "qwen2" || name == "deepseek-r1-qwen") return pre_tokenizer_kind::qwen2;
  if (name == "gpt-2" || name == "gpt2" || name == "default" || name.empty())
    return pre_tokenizer_kind::gpt2;
  throw usage_error(str("tokenizer: pre-tokenizer '", name,
                        "' is not supported (known: llama-bpe, llama3, llama-v3, qwen2, "
                        "deepseek-r1-qwen, gpt-2, default)"));
}

pre_tokenizer::pre_tokenizer(pre_tokenizer_kind kind) : kind_(kind), code_(std::make_unique<compiled>()) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  // MATCH_INVALID_UTF: bytes that are not UTF-8 never match, so split() keeps them as words
  // of their own instead of PCRE2 refusing the whole subject.
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern_of(kind)), PCRE2_ZERO_TERMINATED,
                              PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error,
                              &error_offset, nullptr);
  if (code_->code == nullptr)
    TG_UNREACHABLE(str("pre-tokenizer regex does not compile: ", pcre2_message(error)).c_str());
  code_->jit = pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE) == 0;
}

pre_tokenizer::~pre_tokenizer() = default;
pre_tokenizer::pre_tokenizer(pre_tokenizer&&) noexcept = default;
pre_tokenizer& pre_tokenizer::operator=(pre_tokenizer&&) noexcept = default;

std::vector<std::string_view> pre_tokenizer::split(std::string_view text) const {
  std::vector<std::string_view> words;
  std::unique_ptr<pcre2_match_data, match_data_deleter> match(
      pcre2_match_data_create_from_pattern(code_->code, nullptr));
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const int rc = code_->jit ? pcre2_jit_match(code_->code, subject, text.size(), pos, 0, match.get(), nullptr)
                              : pcre2_match(code_->code, subject, text.size(), pos, 0, match.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0)
      throw usage_error(str("tokenizer: pre-tokenizer failed on a ", text.size(),
                            "-byte text: ", pcre2_message(rc)));
    const PCRE2_SIZE* range = pcre2_get_ovector_pointer(match.get());
    if (range[0] > pos) words.push_back(text.substr(pos, range[0] - pos));
    // No alternative matches the empty string; the guard keeps the loop finite regardless.
    const std::size_t end = range[1] > range[0] ? range[1] : range[0] + 1;
    words.push_back(text.substr(range[0], end - range[0]));
    pos = end;
  }
  if (pos < text.size()) words.push_back(text.substr(pos));
  return words;
}

}  // namespace tg::tokenizer
