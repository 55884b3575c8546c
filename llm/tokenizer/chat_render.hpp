// chat_render.hpp: the per-family renderers behind chat_template (internal).
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "llm/tokenizer/chat_template.hpp"

namespace tg::tokenizer::chat_render {

// Llama 2 chat: roles must alternate user/assistant after an optional system message.
std::string llama2(std::span<const chat_message> messages, std::string_view bos, std::string_view eos);

// Llama 3 and 3.1+ (with_system_block: the "Cutting Knowledge Date" block, dated `today`).
std::string llama3(std::span<const chat_message> messages, std::string_view bos, bool add_generation_prompt,
                   bool with_system_block, std::string_view today);

// chatml, qwen2, qwen2_5 and qwen3.
std::string chatml(std::span<const chat_message> messages, chat_style style, const chat_options& options);

}  // namespace tg::tokenizer::chat_render
