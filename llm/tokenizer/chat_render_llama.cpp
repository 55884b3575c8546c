// chat_render_llama.cpp: the Llama 2 and Llama 3 chat formats, restated from their published
// Jinja templates (Hugging Face tokenizer_config.json of Llama-2-chat, Llama-3 and 3.1).
#include <string>

#include <tg/core/error.hpp>
#include "llm/tokenizer/chat_render.hpp"
#include "llm/tokenizer/utf8.hpp"

namespace tg::tokenizer::chat_render {

namespace {
// Jinja's trim / str.strip(): Unicode White_Space at both ends.
std::string_view trim(std::string_view text) { return utf8::trim_white_space(text); }
}  // namespace

std::string llama2(std::span<const chat_message> messages, std::string_view bos, std::string_view eos) {
  std::string system;
  bool has_system = false;
  if (!messages.empty() && messages[0].role == "system") {
    system = messages[0].content;
    has_system = true;
    messages = messages.subspan(1);
  }
  std::string out;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const chat_message& m = messages[i];
    if ((m.role == "user") != (i % 2 == 0))
      throw usage_error(str("chat template (llama2): message ", i + has_system, " has role '", m.role,
                            "'; roles must alternate user/assistant/user/assistant/... after an optional system"));
    std::string content = m.content;
    if (i == 0 && has_system) content = "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + content;
    if (m.role == "user") {
      out.append(bos).append("[INST] ").append(trim(content)).append(" [/INST]");
    } else {
      out.append(" ").append(trim(content)).append(" ").append(eos);
    }
  }
  // The template has no generation prompt: the text after [/INST] is the assistant's turn.
  return out;
}

std::string llama3(std::span<const chat_message> messages, std::string_view bos, bool add_generation_prompt,
                   bool with_system_block, std::string_view today) {
  auto header = [](std::string_view role) { return "<|start_header_id|>" + std::string(role) + "<|end_header_id|>\n\n"; };
  std::string out(bos);
  if (with_system_block) {
    // Llama 3.1+ always opens with a system turn: the knowledge cutoff, the date, then the
    // caller's system message (trimmed) if the conversation starts with one.
    std::string_view system;
    if (!messages.empty() && messages[0].role == "system") {
      system = trim(messages[0].content);
      messages = messages.subspan(1);
    }
    out += header("system");
    out.append("Cutting Knowledge Date: December 2023\nToday Date: ").append(today).append("\n\n");
    out.append(system).append("<|eot_id|>");
  }
  for (const chat_message& m : messages) out.append(header(m.role)).append(trim(m.content)).append("<|eot_id|>");
  if (add_generation_prompt) out += header("assistant");
  return out;
}

}  // namespace tg::tokenizer::chat_render
