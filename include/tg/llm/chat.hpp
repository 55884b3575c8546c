// chat.hpp: a conversation with a model: the history, rendered with the model's chat template
// each turn, on a session that reuses the cached prefix, so a turn computes only its new text.
//
//   tg::llm::chat c(m, {.max_tokens = 128});
//   c.add_system("Answer in one sentence.");
//   auto r = c.say("Why is the sky blue?", print_token);
//   std::string answer = c.history().back().content;
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <tg/llm/chat_message.hpp>
#include <tg/llm/session.hpp>

namespace tg::llm {

class chat {
 public:
  explicit chat(const model& m, generate_options options = {}, chat_options format = {});

  void add_system(std::string text);
  // Adds the user's turn, generates the reply (streamed through on_token), adds it to the
  // history and returns the generation's result.
  generation_result say(std::string_view user_text, const token_callback& on_token = {});

  const std::vector<chat_message>& history() const { return history_; }
  void reset();  // forgets the history (the session's cache is reused when the next prompt shares it)
  session& current_session() { return session_; }

 private:
  const model* model_;
  session session_;
  generate_options options_;
  chat_options format_;
  std::vector<chat_message> history_;
};

}  // namespace tg::llm
