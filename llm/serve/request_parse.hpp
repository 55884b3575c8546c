// request_parse.hpp: the JSON bodies of the OpenAI endpoints and of /tokenize, /detokenize,
// checked field by field. Every fault is an api_error naming the field (400), so a client
// mistake is never a 500; fields that would change the answer but are not implemented
// (tools, response_format other than text, logprobs, n > 1, ...) are refused, not ignored.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <tg/llm/model.hpp>
#include "llm/serve/generation_request.hpp"

namespace tg::serve {

// The body as JSON; throws api_error 400 when it is not a JSON object.
nlohmann::ordered_json parse_body(const std::string& body);

// OpenAI Chat Completions (platform.openai.com/docs/api-reference/chat/create): messages are
// rendered with the model's chat template.
generation_request parse_chat_request(const nlohmann::ordered_json& body, const llm::model& m);

// OpenAI legacy Completions (platform.openai.com/docs/api-reference/completions/create):
// prompt is a string, one string in an array, or token ids.
generation_request parse_completion_request(const nlohmann::ordered_json& body, const llm::model& m);

// llama.cpp server's /tokenize: {content, add_special = false, parse_special = true, with_pieces = false}.
nlohmann::ordered_json answer_tokenize(const nlohmann::ordered_json& body, const llm::model& m);
// llama.cpp server's /detokenize: {tokens} -> {content}.
nlohmann::ordered_json answer_detokenize(const nlohmann::ordered_json& body, const llm::model& m);

}  // namespace tg::serve
