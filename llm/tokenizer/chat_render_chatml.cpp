// chat_render_chatml.cpp: ChatML and the Qwen2 / Qwen2.5 / Qwen3 variants, restated from the
// templates those models ship (Qwen3's is the one in ggml-vocab-qwen2.gguf).
#include <string>

#include "llm/tokenizer/chat_render.hpp"

namespace tg::tokenizer::chat_render {

namespace {

std::string_view strip_newlines_left(std::string_view s) {
  while (!s.empty() && s.front() == '\n') s.remove_prefix(1);
  return s;
}
std::string_view strip_newlines_right(std::string_view s) {
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return s;
}

void append_turn(std::string& out, std::string_view role, std::string_view content) {
  out.append("<|im_start|>").append(role).append("\n").append(content).append("<|im_end|>\n");
}

// Consecutive tool results share one user turn, each wrapped in <tool_response>.
void append_tool_result(std::string& out, std::span<const chat_message> messages, std::size_t i) {
  if (i == 0 || messages[i - 1].role != "tool") out += "<|im_start|>user";
  out.append("\n<tool_response>\n").append(messages[i].content).append("\n</tool_response>");
  if (i + 1 == messages.size() || messages[i + 1].role != "tool") out += "<|im_end|>\n";
}

// The last user turn that is not a wrapped tool response; reasoning is shown only after it.
std::size_t last_query_index(std::span<const chat_message> messages) {
  for (std::size_t i = messages.size(); i-- > 0;) {
    const std::string_view c = messages[i].content;
    const bool tool_response = c.starts_with("<tool_response>") && c.ends_with("</tool_response>");
    if (messages[i].role == "user" && !tool_response) return i;
  }
  return messages.empty() ? 0 : messages.size() - 1;
}

// Qwen3 splits "<think>reasoning</think>answer" and re-renders it in a canonical form.
void append_qwen3_assistant(std::string& out, std::span<const chat_message> messages, std::size_t i,
                            std::size_t last_query) {
  std::string_view content = messages[i].content;
  std::string_view reasoning;
  if (const std::size_t close = content.find("</think>"); close != std::string_view::npos) {
    std::string_view before = strip_newlines_right(content.substr(0, close));
    if (const std::size_t open = before.rfind("<think>"); open != std::string_view::npos)
      before = before.substr(open + 7);
    reasoning = strip_newlines_left(before);
    content = strip_newlines_left(content.substr(content.rfind("</think>") + 8));
  }
  out.append("<|im_start|>").append(messages[i].role).append("\n");
  const bool show_reasoning = i + 1 == messages.size() || !reasoning.empty();
  if (i > last_query && show_reasoning) {
    out.append("<think>\n").append(strip_newlines_right(strip_newlines_left(reasoning))).append("\n</think>\n\n");
    out.append(strip_newlines_left(content));
  } else {
    out.append(content);
  }
  out += "<|im_end|>\n";
}

}  // namespace

std::string chatml(std::span<const chat_message> messages, chat_style style, const chat_options& options) {
  std::string out;
  const bool system_first = !messages.empty() && messages[0].role == "system";
  const std::size_t last_query = last_query_index(messages);
  if (style == chat_style::qwen2_5 || style == chat_style::qwen3) {
    if (system_first)
      append_turn(out, "system", messages[0].content);
    else if (style == chat_style::qwen2_5)
      append_turn(out, "system", "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.");
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const chat_message& m = messages[i];
    if (style == chat_style::chatml || style == chat_style::qwen2) {
      if (i == 0 && style == chat_style::qwen2 && !system_first)
        append_turn(out, "system", "You are a helpful assistant.");
      append_turn(out, m.role, m.content);
    } else if (m.role == "user" || (m.role == "system" && i > 0)) {
      append_turn(out, m.role, m.content);
    } else if (m.role == "assistant") {
      if (style == chat_style::qwen3)
        append_qwen3_assistant(out, messages, i, last_query);
      else
        append_turn(out, m.role, m.content);
    } else if (m.role == "tool") {
      append_tool_result(out, messages, i);
    }
    // Qwen2.5 and Qwen3 drop other roles, as their templates do.
  }
  if (options.add_generation_prompt) {
    out += "<|im_start|>assistant\n";
    if (style == chat_style::qwen3 && options.enable_thinking == false) out += "<think>\n\n</think>\n\n";
  }
  return out;
}

}  // namespace tg::tokenizer::chat_render
