// chat_template.cpp: recognizing a file's template and choosing a renderer.
#include "llm/tokenizer/chat_template.hpp"

#include <ctime>

#include <tg/core/error.hpp>
#include "llm/tokenizer/chat_render.hpp"
#include "llm/tokenizer/pre_tokenizer.hpp"

namespace tg::tokenizer {

namespace {

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::string token_text_or_empty(const vocabulary& vocab, const std::optional<token_id>& id) {
  return id && vocab.contains(*id) ? vocab.tokens[std::size_t(*id)] : std::string();
}

bool has_token(const vocabulary& vocab, std::string_view text) {
  for (const std::string& token : vocab.tokens)
    if (token == text) return true;
  return false;
}

std::optional<chat_style> family_default(const vocabulary& vocab) {
  if (vocab.model == "llama") return chat_style::llama2;
  if (vocab.model == "gpt2") {
    if (vocab.pre == "llama-bpe" || vocab.pre == "llama3" || vocab.pre == "llama-v3") return chat_style::llama3;
    if (vocab.pre == "qwen2" || vocab.pre == "deepseek-r1-qwen" || has_token(vocab, "<|im_start|>"))
      return chat_style::chatml;
  }
  return std::nullopt;
}

// strftime_now("%d %b %Y") as Llama 3.2's template calls it: local time.
std::string today_local() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%d %b %Y", &local);
  return buffer;
}

}  // namespace

std::string_view chat_style_name(chat_style style) {
  switch (style) {
    case chat_style::llama2: return "llama2";
    case chat_style::llama3: return "llama3";
    case chat_style::llama3_1: return "llama3.1";
    case chat_style::chatml: return "chatml";
    case chat_style::qwen2: return "qwen2";
    case chat_style::qwen2_5: return "qwen2.5";
    case chat_style::qwen3: return "qwen3";
  }
  TG_UNREACHABLE("unknown chat_style");
}

std::optional<chat_style> recognize_chat_template(std::string_view jinja) {
  if (contains(jinja, "<|start_header_id|>") && contains(jinja, "<|end_header_id|>"))
    return contains(jinja, "Cutting Knowledge Date") ? chat_style::llama3_1 : chat_style::llama3;
  if (contains(jinja, "<|im_start|>")) {
    if (contains(jinja, "<think>")) return chat_style::qwen3;
    if (contains(jinja, "You are Qwen, created by Alibaba Cloud")) return chat_style::qwen2_5;
    if (contains(jinja, "You are a helpful assistant")) return chat_style::qwen2;
    return chat_style::chatml;
  }
  if (contains(jinja, "[INST]") && contains(jinja, "<<SYS>>")) return chat_style::llama2;
  return std::nullopt;
}

chat_template::chat_template(chat_style style, std::string bos_text, std::string eos_text)
    : style_(style), bos_text_(std::move(bos_text)), eos_text_(std::move(eos_text)) {}

chat_template chat_template::for_vocabulary(const vocabulary& vocab) {
  std::optional<chat_style> style = recognize_chat_template(vocab.chat_template);
  const bool recognized = style.has_value();
  if (!style) style = family_default(vocab);
  if (!style)
    throw usage_error(str("chat template: no known template for a '", vocab.model, "' vocabulary with pre-tokenizer '",
                          vocab.pre, "' (supported: Llama 2, Llama 3, Qwen/ChatML)"));
  // tinygrad's rule: bos_token is empty when the vocabulary does not add BOS (Qwen).
  const bool adds_bos = vocab.add_bos.value_or(vocab.model == "llama" || *style == chat_style::llama3 ||
                                               *style == chat_style::llama3_1);
  chat_template t(*style, adds_bos ? token_text_or_empty(vocab, vocab.bos_id) : std::string(),
                  token_text_or_empty(vocab, vocab.eos_id));
  t.recognized_ = recognized;
  t.always_generation_prompt_ =
      recognized && *style == chat_style::llama3 && !contains(vocab.chat_template, "add_generation_prompt");
  t.date_from_clock_ = recognized && contains(vocab.chat_template, "strftime_now");
  return t;
}

std::string chat_template::render(std::span<const chat_message> messages, const chat_options& options) const {
  switch (style_) {
    case chat_style::llama2: return chat_render::llama2(messages, bos_text_, eos_text_);
    case chat_style::llama3:
    case chat_style::llama3_1: {
      const bool prompt = options.add_generation_prompt || always_generation_prompt_;
      const std::string today = !options.today.empty() ? options.today
                                : date_from_clock_     ? today_local()
                                                       : std::string("26 Jul 2024");
      return chat_render::llama3(messages, bos_text_, prompt, style_ == chat_style::llama3_1, today);
    }
    default: return chat_render::chatml(messages, style_, options);
  }
}

}  // namespace tg::tokenizer
