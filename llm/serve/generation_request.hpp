// generation_request.hpp: what one /v1/chat/completions or /v1/completions request asks the
// engine for, after its JSON was checked and its prompt tokenized (request_parse.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <tg/llm/model.hpp>
#include <tg/llm/sampling.hpp>

namespace tg::serve {

enum class endpoint_kind { chat, completion };

struct generation_request {
  endpoint_kind kind = endpoint_kind::chat;
  std::string model;                  // echoed back as "model"
  std::vector<llm::token_id> prompt;  // never empty
  std::int64_t max_tokens = -1;       // -1: until the end of generation or of the context
  llm::sampling_params sampling{};
  std::uint64_t seed = 0;
  std::vector<std::string> stop;      // at most 4, none empty
  bool stream = false;
  bool include_usage = false;         // stream_options.include_usage
  bool ignore_eos = false;            // llama.cpp server's: end-of-generation tokens are never sampled
};

}  // namespace tg::serve
