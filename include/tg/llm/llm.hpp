// llm.hpp: tg's LLM library (libtg-llm, pkg-config tg-llm): open a GGUF model, tokenize,
// render chats, and generate on the CPU or an AMD GPU.
//
//   #include <tg/llm/llm.hpp>
//   auto m = tg::llm::model::open("model.gguf");
//   tg::llm::session s(m);
//   s.generate(m.tokenize("The capital of France is"), {.max_tokens = 16},
//              [](tg::llm::token_id, std::string_view text) { std::cout << text; return true; });
#pragma once
#include <tg/core/error.hpp>
#include <tg/llm/chat.hpp>
#include <tg/llm/chat_message.hpp>
#include <tg/llm/model.hpp>
#include <tg/llm/options.hpp>
#include <tg/llm/sampling.hpp>
#include <tg/llm/session.hpp>
#include <tg/log.hpp>
