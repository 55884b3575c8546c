// openai_objects.hpp: the response and stream-chunk objects of the OpenAI API, shaped as
// openai-node's types declare them (src/resources/chat/completions/completions.ts:
// ChatCompletion, ChatCompletionChunk; src/resources/completions.ts: Completion), with
// llama.cpp server's `timings` added to the final object.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "llm/serve/generation_request.hpp"
#include "llm/serve/job.hpp"

namespace tg::serve {

// What every object of one answer shares: "chatcmpl-<hex>" or "cmpl-<hex>", the time, the model.
struct answer_header {
  std::string id;
  std::int64_t created = 0;
  std::string model;
  endpoint_kind kind = endpoint_kind::chat;
};
answer_header new_answer_header(const generation_request& r);

// "stop" or "length"; only for finish_reason::stop and ::length.
const char* finish_reason_name(finish_reason why);

nlohmann::ordered_json usage_object(const job_stats& s);
nlohmann::ordered_json timings_object(const job_stats& s);

// A stream chunk: chat deltas ({"role":"assistant","content":""} first, then {"content":...},
// then {} with the finish reason), or text_completion pieces. `finish` null until the end.
nlohmann::ordered_json chunk_object(const answer_header& h, const generation_request& r, const nlohmann::ordered_json& delta_or_text,
                            const nlohmann::ordered_json& finish);
// The usage chunk that ends a stream when stream_options.include_usage: "choices": [].
nlohmann::ordered_json usage_chunk_object(const answer_header& h, const job_stats& s);
// The whole answer of a non-streaming request.
nlohmann::ordered_json final_object(const answer_header& h, const std::string& text, finish_reason why, const job_stats& s);

// JSON text for the wire. Invalid UTF-8 (from a token id a client sent to /detokenize) becomes
// U+FFFD rather than an exception (nlohmann's dump throws type_error 316 by default).
std::string to_wire(const nlohmann::ordered_json& v);

}  // namespace tg::serve
