// chat.cpp: tg::llm::chat: a turn renders the whole history and generates on one session, whose
// cache already holds every earlier turn, so only the new text goes through the model.
#include <tg/llm/chat.hpp>

namespace tg::llm {

chat::chat(const model& m, generate_options options, chat_options format)
    : model_(&m), session_(m), options_(options), format_(std::move(format)) {}

void chat::add_system(std::string text) { history_.push_back({"system", std::move(text)}); }

generation_result chat::say(std::string_view user_text, const token_callback& on_token) {
  history_.push_back({"user", std::string(user_text)});
  generation_result r;
  try {
    std::vector<token_id> ids = model_->tokenize(model_->render_chat(history_, format_), false, true);
    r = session_.generate(ids, options_, on_token);
  } catch (...) {
    history_.pop_back();  // a turn that failed (the context is full, say) is not part of the chat
    throw;
  }
  history_.push_back({"assistant", model_->detokenize(r.tokens)});
  return r;
}

void chat::reset() { history_.clear(); }

}  // namespace tg::llm
