// openai_objects.cpp: OpenAI response objects; see openai_objects.hpp.
#include "llm/serve/openai_objects.hpp"

#include <chrono>
#include <random>

namespace tg::serve {

using json = nlohmann::ordered_json;

answer_header new_answer_header(const generation_request& r) {
  static constexpr char hex[] = "0123456789abcdef";
  std::random_device rd;
  std::string id = r.kind == endpoint_kind::chat ? "chatcmpl-" : "cmpl-";
  for (int i = 0; i < 24; ++i) id += hex[rd() % 16];
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return {id, std::chrono::duration_cast<std::chrono::seconds>(now).count(), r.model, r.kind};
}

const char* finish_reason_name(finish_reason why) { return why == finish_reason::length ? "length" : "stop"; }

json usage_object(const job_stats& s) {
  return {{"prompt_tokens", s.prompt_tokens},
          {"completion_tokens", s.completion_tokens},
          {"total_tokens", s.prompt_tokens + s.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", s.cached_tokens}}}};
}

json timings_object(const job_stats& s) {
  const std::int64_t prompt_n = s.prompt_tokens - s.cached_tokens;
  const double prompt_ms = s.prompt_seconds * 1e3, predicted_ms = s.decode_seconds * 1e3;
  auto per_token = [](double ms, std::int64_t n) { return n > 0 ? ms / double(n) : 0.0; };
  auto per_second = [](double ms, std::int64_t n) { return ms > 0 ? double(n) * 1e3 / ms : 0.0; };
  return {{"cache_n", s.cached_tokens},
          {"prompt_n", prompt_n},
          {"prompt_ms", prompt_ms},
          {"prompt_per_token_ms", per_token(prompt_ms, prompt_n)},
          {"prompt_per_second", per_second(prompt_ms, prompt_n)},
          {"predicted_n", s.completion_tokens},
          {"predicted_ms", predicted_ms},
          {"predicted_per_token_ms", per_token(predicted_ms, s.completion_tokens)},
          {"predicted_per_second", per_second(predicted_ms, s.completion_tokens)}};
}

json chunk_object(const answer_header& h, const generation_request& r, const json& delta_or_text, const json& finish) {
  json choice;
  if (h.kind == endpoint_kind::chat) {
    choice = {{"index", 0}, {"delta", delta_or_text}, {"logprobs", nullptr}, {"finish_reason", finish}};
  } else {
    choice = {{"index", 0}, {"text", delta_or_text}, {"logprobs", nullptr}, {"finish_reason", finish}};
  }
  json chunk = {{"id", h.id},
                {"object", h.kind == endpoint_kind::chat ? "chat.completion.chunk" : "text_completion"},
                {"created", h.created},
                {"model", h.model},
                {"choices", json::array({choice})}};
  // "All other chunks will also include a usage field, but with a null value" (stream_options.include_usage).
  if (r.include_usage) chunk["usage"] = nullptr;
  return chunk;
}

json usage_chunk_object(const answer_header& h, const job_stats& s) {
  return {{"id", h.id},
          {"object", h.kind == endpoint_kind::chat ? "chat.completion.chunk" : "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"choices", json::array()},
          {"usage", usage_object(s)},
          {"timings", timings_object(s)}};
}

json final_object(const answer_header& h, const std::string& text, finish_reason why, const job_stats& s) {
  json choice;
  if (h.kind == endpoint_kind::chat) {
    choice = {{"index", 0},
              {"message", {{"role", "assistant"}, {"content", text}, {"refusal", nullptr}}},
              {"logprobs", nullptr},
              {"finish_reason", finish_reason_name(why)}};
  } else {
    choice = {{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", finish_reason_name(why)}};
  }
  return {{"id", h.id},
          {"object", h.kind == endpoint_kind::chat ? "chat.completion" : "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"choices", json::array({choice})},
          {"usage", usage_object(s)},
          {"timings", timings_object(s)}};
}

std::string to_wire(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace tg::serve
