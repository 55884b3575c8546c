// request_parse.cpp: field-by-field checks of the OpenAI request bodies; see request_parse.hpp.
#include "llm/serve/request_parse.hpp"

#include <random>

#include <tg/core/error.hpp>
#include "llm/serve/api_error.hpp"
#include "llm/tokenizer/utf8_stream.hpp"

namespace tg::serve {
namespace {

using json = nlohmann::ordered_json;

const char* type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

api_error wrong_type(const std::string& field, const char* expected, const json& got) {
  return invalid_request(str("'", field, "' must be ", expected, ", not ", type_name(got)), field, "invalid_type");
}

api_error bad_value(const std::string& field, const std::string& why) {
  return invalid_request(str("'", field, "' ", why), field, "invalid_value");
}

api_error unsupported(const std::string& field, const std::string& why) {
  return invalid_request(str("'", field, "' is not supported by this server: ", why), field, "unsupported_parameter");
}

// The field when present and not null.
const json* find(const json& body, const char* field) {
  auto it = body.find(field);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::optional<double> number_field(const json& body, const char* field, double lo, double hi) {
  const json* v = find(body, field);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw wrong_type(field, "a number", *v);
  double x = v->get<double>();
  if (!(x >= lo && x <= hi)) throw bad_value(field, str("must be between ", lo, " and ", hi, ", got ", x));
  return x;
}

std::optional<std::int64_t> integer_field(const json& body, const char* field) {
  const json* v = find(body, field);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) throw wrong_type(field, "an integer", *v);
  return v->get<std::int64_t>();
}

bool bool_field(const json& body, const char* field, bool otherwise) {
  const json* v = find(body, field);
  if (!v) return otherwise;
  if (!v->is_boolean()) throw wrong_type(field, "a boolean", *v);
  return v->get<bool>();
}

void check_model_field(const json& body) {
  const json* v = find(body, "model");
  if (v && !v->is_string()) throw wrong_type("model", "a string", *v);
}

// Fields that would change the answer if honoured: refusing them is better than an answer
// the client did not ask for (a tool call never made, JSON never enforced).
void refuse_unimplemented(const json& body) {
  if (auto n = integer_field(body, "n"); n && *n != 1)
    throw unsupported("n", str("only one choice per request (n = 1); got ", *n, ", send ", *n, " requests instead"));
  if (const json* v = find(body, "tools"); v && !(v->is_array() && v->empty()))
    throw unsupported("tools", "tool calls are not implemented");
  if (const json* v = find(body, "functions"); v && !(v->is_array() && v->empty()))
    throw unsupported("functions", "function calls are not implemented");
  if (const json* v = find(body, "tool_choice"); v && !(v->is_string() && (*v == "none" || *v == "auto")))
    throw unsupported("tool_choice", "tool calls are not implemented");
  if (const json* v = find(body, "response_format")) {
    if (!v->is_object()) throw wrong_type("response_format", "an object", *v);
    if (v->value("type", "text") != "text")
      throw unsupported("response_format", "only {\"type\": \"text\"}; JSON output is not enforced");
  }
  if (const json* v = find(body, "logit_bias"); v && !(v->is_object() && v->empty()))
    throw unsupported("logit_bias", "logit biases are not implemented");
  for (const char* penalty : {"presence_penalty", "frequency_penalty"})
    if (auto p = number_field(body, penalty, -2.0, 2.0); p && *p != 0.0) throw unsupported(penalty, "penalties are not implemented");
  if (const json* v = find(body, "top_logprobs"); v && !(v->is_number_integer() && *v == 0))
    throw unsupported("top_logprobs", "log probabilities are not implemented");
}

std::vector<std::string> stop_field(const json& body) {
  const json* v = find(body, "stop");
  std::vector<std::string> stops;
  if (!v) return stops;
  if (v->is_string()) {
    stops.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    if (v->size() > 4) throw bad_value("stop", str("takes at most 4 sequences, got ", v->size()));
    for (const json& s : *v) {
      if (!s.is_string()) throw wrong_type("stop", "a string or an array of strings", s);
      stops.push_back(s.get<std::string>());
    }
  } else {
    throw wrong_type("stop", "a string or an array of strings", *v);
  }
  std::erase_if(stops, [](const std::string& s) { return s.empty(); });  // an empty stop would end every answer at once
  return stops;
}

// The fields the two endpoints share: sampling, length, stop, streaming.
void read_common(const json& body, const llm::model& m, generation_request& r) {
  check_model_field(body);
  refuse_unimplemented(body);
  r.model = m.info().name;
  // OpenAI's defaults: temperature 1, top_p 1; top_k and min_p are llama.cpp's extras, off by default.
  r.sampling.temperature = float(number_field(body, "temperature", 0.0, 2.0).value_or(1.0));
  r.sampling.top_p = float(number_field(body, "top_p", 0.0, 1.0).value_or(1.0));
  if (r.sampling.top_p == 0.0f) r.sampling.top_p = 1e-6f;  // "only the top token": top_p must be > 0 for the sampler
  if (auto k = integer_field(body, "top_k")) {
    if (*k < 0) throw bad_value("top_k", str("must be 0 (off) or more, got ", *k));
    r.sampling.top_k = std::uint32_t(std::min<std::int64_t>(*k, 1 << 30));
  }
  r.sampling.min_p = float(number_field(body, "min_p", 0.0, 1.0).value_or(0.0));
  if (auto seed = integer_field(body, "seed")) {
    r.seed = std::uint64_t(*seed);
  } else {
    r.seed = (std::uint64_t(std::random_device{}()) << 32) | std::random_device{}();
  }
  std::optional<std::int64_t> limit = integer_field(body, "max_tokens");
  if (auto mct = integer_field(body, "max_completion_tokens")) limit = mct;  // the newer name wins
  if (limit && *limit < -1) throw bad_value(body.contains("max_completion_tokens") ? "max_completion_tokens" : "max_tokens",
                                            str("must be at least 0 (or -1 for no limit), got ", *limit));
  r.max_tokens = limit.value_or(-1);
  r.stop = stop_field(body);
  r.ignore_eos = bool_field(body, "ignore_eos", false);
  r.stream = bool_field(body, "stream", false);
  if (const json* so = find(body, "stream_options")) {
    if (!so->is_object()) throw wrong_type("stream_options", "an object", *so);
    if (!r.stream) throw invalid_request("'stream_options' is only allowed when 'stream' is true", "stream_options");
    r.include_usage = bool_field(*so, "include_usage", false);
  }
}

void check_context(const generation_request& r, const llm::model& m, const char* param) {
  const std::int64_t context = m.info().max_context;
  if (std::int64_t(r.prompt.size()) >= context)
    throw invalid_request(str("the prompt has ", r.prompt.size(), " tokens, but the context is ", context,
                              " (the server's --max-context), which leaves no room for an answer"),
                          param, "context_length_exceeded");
}

std::string message_content(const json& message, const std::string& where) {
  auto it = message.find("content");
  if (it == message.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) throw wrong_type(where + ".content", "a string or an array of content parts", *it);
  std::string text;
  for (std::size_t j = 0; j < it->size(); ++j) {
    const json& part = (*it)[j];
    const std::string at = str(where, ".content[", j, "]");
    if (!part.is_object()) throw wrong_type(at, "an object", part);
    auto type = part.find("type");
    if (type == part.end() || !type->is_string()) throw invalid_request(str("'", at, ".type' must be a string"), at + ".type");
    if (*type != "text") throw unsupported(at + ".type", str("only text parts, got \"", type->get<std::string>(), "\""));
    auto t = part.find("text");
    if (t == part.end() || !t->is_string()) throw invalid_request(str("'", at, ".text' must be a string"), at + ".text");
    text += t->get<std::string>();
  }
  return text;
}

std::vector<llm::chat_message> chat_messages(const json& body) {
  auto it = body.find("messages");
  if (it == body.end()) throw invalid_request("'messages' is required", "messages", "missing_required_parameter");
  if (!it->is_array()) throw wrong_type("messages", "an array", *it);
  if (it->empty()) throw bad_value("messages", "must hold at least one message");
  std::vector<llm::chat_message> messages;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& msg = (*it)[i];
    const std::string where = str("messages[", i, "]");
    if (!msg.is_object()) throw wrong_type(where, "an object", msg);
    auto role = msg.find("role");
    if (role == msg.end() || !role->is_string()) throw invalid_request(str("'", where, ".role' must be a string"), where + ".role");
    std::string r = role->get<std::string>();
    if (r == "developer") r = "system";  // OpenAI's newer name for the system role
    if (r != "system" && r != "user" && r != "assistant" && r != "tool")
      throw bad_value(where + ".role", str("must be system, developer, user, assistant or tool, got \"", r, "\""));
    if (const json* calls = find(msg, "tool_calls"); calls && !(calls->is_array() && calls->empty()))
      throw unsupported(where + ".tool_calls", "tool calls are not implemented");
    messages.push_back({r, message_content(msg, where)});
  }
  return messages;
}

std::vector<llm::token_id> token_ids(const json& v, const llm::model& m, const std::string& field) {
  std::vector<llm::token_id> ids;
  const std::int64_t vocab = m.info().vocab;
  for (const json& t : v) {
    if (!t.is_number_integer()) throw wrong_type(field, "an array of token ids (integers)", t);
    std::int64_t id = t.get<std::int64_t>();
    if (id < 0 || id >= vocab) throw bad_value(field, str("holds token id ", id, ", outside the vocabulary [0, ", vocab, ")"));
    ids.push_back(llm::token_id(id));
  }
  return ids;
}

}  // namespace

json parse_body(const std::string& body) {
  json v;
  try {
    v = json::parse(body);
  } catch (const json::parse_error& e) {
    throw invalid_request(str("the body is not valid JSON: ", e.what()), std::nullopt, "invalid_json");
  }
  if (!v.is_object()) throw invalid_request(str("the body must be a JSON object, not ", type_name(v)), std::nullopt, "invalid_json");
  return v;
}

generation_request parse_chat_request(const json& body, const llm::model& m) {
  generation_request r;
  r.kind = endpoint_kind::chat;
  read_common(body, m, r);
  if (bool_field(body, "logprobs", false)) throw unsupported("logprobs", "log probabilities are not implemented");
  std::vector<llm::chat_message> messages = chat_messages(body);
  std::string text;
  try {
    text = m.render_chat(messages);
  } catch (const usage_error& e) {  // a role the template has no place for, or no template at all
    throw invalid_request(e.what(), "messages");
  }
  r.prompt = m.tokenize(text, false, true);  // templates write BOS themselves
  if (r.prompt.empty()) throw bad_value("messages", "render to an empty prompt");
  check_context(r, m, "messages");
  return r;
}

generation_request parse_completion_request(const json& body, const llm::model& m) {
  generation_request r;
  r.kind = endpoint_kind::completion;
  read_common(body, m, r);
  if (const json* v = find(body, "logprobs"); v && !(v->is_number_integer() && *v == 0))
    throw unsupported("logprobs", "log probabilities are not implemented");
  if (bool_field(body, "echo", false)) throw unsupported("echo", "the prompt is not echoed");
  if (const json* v = find(body, "suffix"); v && !(v->is_string() && v->get<std::string>().empty()))
    throw unsupported("suffix", "insertion is not implemented");
  if (auto b = integer_field(body, "best_of"); b && *b != 1) throw unsupported("best_of", "only best_of = 1");
  const json* p = find(body, "prompt");
  if (!p) throw invalid_request("'prompt' is required", "prompt", "missing_required_parameter");
  const json* one = p;
  if (p->is_array() && !p->empty() && ((*p)[0].is_string() || (*p)[0].is_array())) {
    if (p->size() != 1) throw unsupported("prompt", str("one prompt per request, got ", p->size()));
    one = &(*p)[0];
  }
  if (one->is_string()) {
    r.prompt = m.tokenize(one->get<std::string>(), true, true);
  } else if (one->is_array()) {
    r.prompt = token_ids(*one, m, "prompt");
  } else {
    throw wrong_type("prompt", "a string, an array of one string, or token ids", *one);
  }
  if (r.prompt.empty()) throw bad_value("prompt", "is empty (a prompt needs at least one token)");
  check_context(r, m, "prompt");
  return r;
}

json answer_tokenize(const json& body, const llm::model& m) {
  auto it = body.find("content");
  if (it == body.end()) throw invalid_request("'content' is required", "content", "missing_required_parameter");
  if (!it->is_string()) throw wrong_type("content", "a string", *it);
  std::vector<llm::token_id> ids =
      m.tokenize(it->get<std::string>(), bool_field(body, "add_special", false), bool_field(body, "parse_special", true));
  if (!bool_field(body, "with_pieces", false)) return {{"tokens", ids}};
  json tokens = json::array();
  for (llm::token_id id : ids) {
    std::string piece = m.detokenize(std::span(&id, 1), true);
    tokenizer::utf8_stream check;
    std::string valid = check.push(piece) + check.flush();
    // llama.cpp's rule: a piece that is not valid UTF-8 on its own goes out as its bytes.
    json p = piece;
    if (valid != piece) {
      p = json::array();
      for (unsigned char byte : piece) p.push_back(int(byte));
    }
    tokens.push_back({{"id", id}, {"piece", p}});
  }
  return {{"tokens", tokens}};
}

json answer_detokenize(const json& body, const llm::model& m) {
  auto it = body.find("tokens");
  if (it == body.end()) throw invalid_request("'tokens' is required", "tokens", "missing_required_parameter");
  if (!it->is_array()) throw wrong_type("tokens", "an array of token ids", *it);
  std::vector<llm::token_id> ids = token_ids(*it, m, "tokens");
  std::string text = m.detokenize(ids, false);
  return {{"content", text}};
}

}  // namespace tg::serve
