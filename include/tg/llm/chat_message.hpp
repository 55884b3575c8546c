// chat_message.hpp: one turn of a conversation, and how a conversation is rendered into a
// prompt (the model's chat template picks the format; see tg::llm::model::render_chat).
#pragma once
#include <optional>
#include <string>

namespace tg::llm {

struct chat_message {
  std::string role;  // "system", "user", "assistant" (ChatML styles also take "tool")
  std::string content;
};

struct chat_options {
  bool add_generation_prompt = true;
  // qwen3: false appends an empty <think></think> block so the model answers directly.
  std::optional<bool> enable_thinking;
  // llama3_1: the "Today Date" line, e.g. "26 Jul 2024". Empty: the template's own choice
  // (today's local date for templates that call strftime_now, else "26 Jul 2024").
  std::string today;
};

}  // namespace tg::llm
