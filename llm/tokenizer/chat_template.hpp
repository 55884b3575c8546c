// chat_template.hpp: renders a conversation into prompt text for Llama 2, Llama 3 and ChatML.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "llm/tokenizer/vocabulary.hpp"
#include <tg/llm/chat_message.hpp>

namespace tg::tokenizer {

using llm::chat_message;
using llm::chat_options;

// The templates we render natively (no Jinja engine). Each follows one published template.
enum class chat_style {
  llama2,    // Llama 2 chat: <s>[INST] <<SYS>>...<</SYS>> user [/INST] reply </s>
  llama3,    // Llama 3: <|start_header_id|>role<|end_header_id|>\n\n content <|eot_id|>
  llama3_1,  // Llama 3.1-3.3: llama3 plus a system block with "Cutting Knowledge Date"
  chatml,    // <|im_start|>role\n content <|im_end|>\n, nothing else (tinygrad/llm/cli.py: FallbackTemplate)
  qwen2,     // ChatML with the default system prompt "You are a helpful assistant."
  qwen2_5,   // ChatML with Qwen2.5's default system prompt, and tool turns
  qwen3,     // ChatML with <think> blocks: reasoning kept only after the last user turn
};

std::string_view chat_style_name(chat_style style);

// Which known template a GGUF chat_template is, by the markers it contains; nullopt if none.
std::optional<chat_style> recognize_chat_template(std::string_view jinja);

class chat_template {
 public:
  // The style of the vocabulary's own template when we recognize it; otherwise the built-in
  // of its family (llama3 for the llama3 preset, chatml for qwen2 or any vocabulary with
  // <|im_start|>, llama2 for SentencePiece). Throws usage_error when there is no family.
  static chat_template for_vocabulary(const vocabulary& vocab);

  // bos_text / eos_text: what the template's bos_token and eos_token stand for.
  chat_template(chat_style style, std::string bos_text, std::string eos_text);

  chat_style style() const { return style_; }
  // Whether the style came from recognizing the file's template (false: a built-in default).
  bool recognized() const { return recognized_; }

  // The prompt text. Tokenize it with parse_special = true and add_bos = false: templates
  // that want BOS write its text themselves.
  //
  //   auto chat = tg::tokenizer::chat_template::for_vocabulary(tok.vocab());
  //   std::vector<chat_message> messages = {{"user", "Hi"}};
  //   auto ids = tok.encode(chat.render(messages), false, true);
  std::string render(std::span<const chat_message> messages, const chat_options& options = {}) const;

 private:
  chat_style style_;
  std::string bos_text_, eos_text_;
  bool recognized_ = false;
  // The stock Llama 3 template appends the assistant header even without add_generation_prompt.
  bool always_generation_prompt_ = false;
  bool date_from_clock_ = false;  // the template calls strftime_now (Llama 3.2)
};

}  // namespace tg::tokenizer
