// model_state.hpp: what a tg::llm::model holds, shared by the library's model, session and
// chat implementations.
#pragma once
#include <cstdint>
#include <optional>

#include <tg/device.hpp>
#include <tg/llm/model.hpp>
#include "llm/gguf/gguf_file.hpp"
#include "llm/model/transformer.hpp"
#include "llm/tokenizer/chat_template.hpp"
#include "llm/tokenizer/tokenizer.hpp"

namespace tg::llm {

// Declared in this order so that it is destroyed in reverse: the transformer reads the mapped
// file and runs on the device.
struct model::state {
  gguf::file file;
  tokenizer::tokenizer tok;
  std::optional<tokenizer::chat_template> chat;  // none when the vocabulary has no chat family
  tg::device dev;
  tg::model::transformer net;
  model_info info;
  // The session whose tokens the KV cache holds (0: none); see session::state.
  std::uint64_t cache_owner = 0;
  std::uint64_t next_session = 1;

  state(gguf::file f, const model_options& options);
};

}  // namespace tg::llm
