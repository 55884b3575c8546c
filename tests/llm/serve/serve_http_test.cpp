// serve_http_test.cpp: `llm --serve` over raw HTTP on a synthetic model: every endpoint, the
// OpenAI objects and stream format, sampling fields, stop sequences, every client error as
// an OpenAI error object with a 4xx, the API key, the body limit, the queue limit, a client
// that hangs up, and a clean exit on SIGTERM.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include <doctest/doctest.h>

#include "tests/llm/serve/http_helpers.hpp"
#include "tests/llm/serve/server_process.hpp"

namespace {

using namespace tg::test;
using namespace std::chrono_literals;

// One server for most cases (started on first use, stopped by the last case).
server_process& shared_server() {
  static server_process s({"--max-context", "4096", "--queue-limit", "4"});
  return s;
}
int port() { return shared_server().port(); }

json chat_body(const std::string& user, int max_tokens) {
  return {{"model", "any"}, {"messages", json::array({{{"role", "user"}, {"content", user}}})},
          {"max_tokens", max_tokens}, {"temperature", 0}};
}

// The error object of a reply, checked for OpenAI's shape.
json error_of(const reply& r) {
  json body = r.parsed();
  REQUIRE(body.contains("error"));
  const json& e = body["error"];
  CHECK(e["message"].is_string());
  CHECK(e["type"].is_string());
  CHECK(e.contains("param"));
  CHECK(e.contains("code"));
  return e;
}

// The value of a counter or gauge in /metrics.
double metric(int p, const std::string& name) {
  reply r = get(p, "/metrics");
  REQUIRE(r.status == 200);
  auto at = r.body.find("\n" + name + " ");
  REQUIRE_MESSAGE(at != std::string::npos, name << " missing from /metrics");
  return std::stod(r.body.substr(at + name.size() + 2));
}

// Waits until a metric reaches a value; false after the timeout.
bool metric_reaches(int p, const std::string& name, double value, std::chrono::milliseconds timeout) {
  for (auto end = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < end;) {
    if (metric(p, name) == value) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

}  // namespace

TEST_CASE("health, models and the chat page answer") {
  reply h = get(port(), "/health");
  CHECK(h.status == 200);
  CHECK(h.parsed() == json{{"status", "ok"}});
  reply m = get(port(), "/v1/models");
  REQUIRE(m.status == 200);
  json list = m.parsed();
  CHECK(list["object"] == "list");
  REQUIRE(list["data"].size() == 1);
  const std::string id = list["data"][0]["id"];
  CHECK(list["data"][0]["object"] == "model");
  CHECK(list["data"][0]["created"].is_number_integer());
  CHECK(get(port(), "/v1/models/" + id).parsed()["id"] == id);
  reply missing = get(port(), "/v1/models/no-such-model");
  CHECK(missing.status == 404);
  CHECK(error_of(missing)["code"] == "model_not_found");
  reply page = get(port(), "/");
  CHECK(page.status == 200);
  CHECK(page.body.find("<!doctype html>") == 0);
  CHECK(page.body.find("/v1/chat/completions") != std::string::npos);
  reply unknown = get(port(), "/../etc/passwd");
  CHECK(unknown.status >= 400);
  CHECK(unknown.status < 500);
}

TEST_CASE("a chat completion is one OpenAI object with usage and timings") {
  reply r = post(port(), "/v1/chat/completions", chat_body("Hello there", 8));
  REQUIRE(r.status == 200);
  json c = r.parsed();
  CHECK(c["object"] == "chat.completion");
  CHECK(c["id"].get<std::string>().rfind("chatcmpl-", 0) == 0);
  REQUIRE(c["choices"].size() == 1);
  CHECK(c["choices"][0]["index"] == 0);
  CHECK(c["choices"][0]["message"]["role"] == "assistant");
  CHECK(c["choices"][0]["message"]["content"].is_string());
  const std::string finish = c["choices"][0]["finish_reason"];
  CHECK((finish == "length" || finish == "stop"));
  const json& u = c["usage"];
  CHECK(u["total_tokens"] == u["prompt_tokens"].get<int>() + u["completion_tokens"].get<int>());
  if (finish == "length") CHECK(u["completion_tokens"] == 8);
  CHECK(u["prompt_tokens"].get<int>() > 2);
  CHECK(c["timings"]["predicted_n"] == u["completion_tokens"]);
  CHECK(c["timings"].contains("prompt_per_second"));
}

TEST_CASE("a streamed chat sends the role first, then text, the finish reason, usage and [DONE]") {
  json body = chat_body("Hello there", 10);
  const std::string whole = post(port(), "/v1/chat/completions", body).parsed()["choices"][0]["message"]["content"];
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  event_stream s = stream(port(), "/v1/chat/completions", body);
  CHECK(s.status == 200);
  CHECK(s.content_type.rfind("text/event-stream", 0) == 0);
  REQUIRE(s.done);
  CHECK_FALSE(s.other_after_done);
  REQUIRE(s.chunks.size() >= 3);
  const json& first = s.chunks.front();
  CHECK(first["object"] == "chat.completion.chunk");
  CHECK(first["choices"][0]["delta"]["role"] == "assistant");
  CHECK(first["choices"][0]["finish_reason"].is_null());
  const std::string id = first["id"];
  for (const json& c : s.chunks) CHECK(c["id"] == id);
  const json& usage_chunk = s.chunks.back();
  CHECK(usage_chunk["choices"].empty());
  CHECK(usage_chunk["usage"]["completion_tokens"].get<int>() >= 1);
  const json& last = s.chunks[s.chunks.size() - 2];
  CHECK(last["choices"][0]["delta"].empty());
  CHECK(last["choices"][0]["finish_reason"].is_string());
  for (std::size_t i = 0; i + 2 < s.chunks.size(); ++i) CHECK(s.chunks[i]["usage"].is_null());
  CHECK(stream_text(s) == whole);  // greedy: the same text streamed or not

  SUBCASE("without include_usage there is no usage chunk") {
    body.erase("stream_options");
    event_stream plain = stream(port(), "/v1/chat/completions", body);
    REQUIRE(plain.done);
    CHECK_FALSE(plain.chunks.back()["choices"].empty());
    CHECK_FALSE(plain.chunks.back().contains("usage"));
    CHECK(stream_text(plain) == whole);
  }
}

TEST_CASE("max_completion_tokens wins over max_tokens, and 0 generates nothing") {
  json body = chat_body("Count", 3);
  body["max_completion_tokens"] = 5;
  json c = post(port(), "/v1/chat/completions", body).parsed();
  if (c["choices"][0]["finish_reason"] == "length") CHECK(c["usage"]["completion_tokens"] == 5);
  CHECK(c["usage"]["completion_tokens"].get<int>() <= 5);
  body["max_completion_tokens"] = 0;
  json none = post(port(), "/v1/chat/completions", body).parsed();
  CHECK(none["usage"]["completion_tokens"] == 0);
  CHECK(none["choices"][0]["message"]["content"] == "");
  CHECK(none["choices"][0]["finish_reason"] == "length");
}

TEST_CASE("ignore_eos generates max_tokens tokens, never an end token") {
  json body = {{"prompt", "Once"}, {"max_tokens", 300}, {"temperature", 1.5}, {"seed", 3}, {"ignore_eos", true}};
  json c = post(port(), "/v1/completions", body).parsed();
  CHECK(c["usage"]["completion_tokens"] == 300);
  CHECK(c["choices"][0]["finish_reason"] == "length");
}

TEST_CASE("a follow-up turn reuses the cached conversation") {
  json body = chat_body("Tell me a story about a cat", 4);
  json a = post(port(), "/v1/chat/completions", body).parsed();
  body["messages"].push_back({{"role", "assistant"}, {"content", a["choices"][0]["message"]["content"]}});
  body["messages"].push_back({{"role", "user"}, {"content", "And then?"}});
  json b = post(port(), "/v1/chat/completions", body).parsed();
  CHECK(b["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>() >= a["usage"]["prompt_tokens"].get<int>() - 1);
  CHECK(b["timings"]["cache_n"] == b["usage"]["prompt_tokens_details"]["cached_tokens"]);
}

TEST_CASE("completions take a string or token ids, streamed or not") {
  json body = {{"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0}};
  reply r = post(port(), "/v1/completions", body);
  REQUIRE(r.status == 200);
  json c = r.parsed();
  CHECK(c["object"] == "text_completion");
  CHECK(c["id"].get<std::string>().rfind("cmpl-", 0) == 0);
  const std::string text = c["choices"][0]["text"];
  json ids = post(port(), "/tokenize", {{"content", "Once upon a time"}, {"add_special", true}}).parsed()["tokens"];
  CHECK(c["usage"]["prompt_tokens"] == ids.size());
  body["prompt"] = ids;
  CHECK(post(port(), "/v1/completions", body).parsed()["choices"][0]["text"] == text);
  body["prompt"] = json::array({"Once upon a time"});
  CHECK(post(port(), "/v1/completions", body).parsed()["choices"][0]["text"] == text);
  body["stream"] = true;
  event_stream s = stream(port(), "/v1/completions", body);
  REQUIRE(s.done);
  CHECK(s.chunks[0]["object"] == "text_completion");
  CHECK(stream_text(s) == text);
}

TEST_CASE("a stop sequence ends the answer before it, streamed or not") {
  json body = {{"prompt", "Once upon a time"}, {"max_tokens", 24}, {"temperature", 0}};
  const std::string text = post(port(), "/v1/completions", body).parsed()["choices"][0]["text"];
  REQUIRE(text.size() >= 8);
  const std::string stop = text.substr(4, 2);
  const std::size_t at = text.find(stop);
  body["stop"] = json::array({"\x01never", stop});
  json c = post(port(), "/v1/completions", body).parsed();
  CHECK(c["choices"][0]["text"] == text.substr(0, at));
  CHECK(c["choices"][0]["finish_reason"] == "stop");
  body["stream"] = true;
  event_stream s = stream(port(), "/v1/completions", body);
  REQUIRE(s.done);
  CHECK(stream_text(s) == text.substr(0, at));
  body["stop"] = "\x01never";  // a stop that never comes: nothing is held back at the end
  CHECK(stream_text(stream(port(), "/v1/completions", body)) == text);
}

TEST_CASE("a seed makes sampling reproducible; top_k 1 is greedy") {
  json body = {{"prompt", "The weather"}, {"max_tokens", 16}, {"temperature", 1.5}, {"seed", 42}};
  const std::string a = post(port(), "/v1/completions", body).parsed()["choices"][0]["text"];
  CHECK(post(port(), "/v1/completions", body).parsed()["choices"][0]["text"] == a);
  body["top_p"] = 0.9;
  body["min_p"] = 0.05;
  CHECK(post(port(), "/v1/completions", body).parsed()["choices"][0]["text"].is_string());
  json greedy = {{"prompt", "The weather"}, {"max_tokens", 16}, {"temperature", 0}};
  body = {{"prompt", "The weather"}, {"max_tokens", 16}, {"temperature", 1.5}, {"top_k", 1}, {"seed", 7}};
  CHECK(post(port(), "/v1/completions", body).parsed()["choices"][0]["text"] ==
        post(port(), "/v1/completions", greedy).parsed()["choices"][0]["text"]);
}

TEST_CASE("tokenize and detokenize round-trip") {
  json t = post(port(), "/tokenize", {{"content", "Hello world"}}).parsed();
  REQUIRE(t["tokens"].is_array());
  CHECK(post(port(), "/detokenize", {{"tokens", t["tokens"]}}).parsed()["content"] == "Hello world");
  json pieces = post(port(), "/tokenize", {{"content", "Hello"}, {"with_pieces", true}}).parsed()["tokens"];
  std::string joined;
  for (const json& p : pieces) joined += p["piece"].get<std::string>();
  CHECK(joined == "Hello");
  CHECK(error_of(post(port(), "/detokenize", {{"tokens", {1, -5}}}))["param"] == "tokens");
}

TEST_CASE("client mistakes are 400s with OpenAI error objects naming the field") {
  auto expect_400 = [](const std::string& path, const std::string& raw, const char* param, const char* code) {
    CAPTURE(raw);
    reply r = post_raw(port(), path, raw);
    CHECK(r.status == 400);
    json e = error_of(r);
    CHECK(e["type"] == "invalid_request_error");
    if (param) CHECK(e["param"] == param);
    if (code) CHECK(e["code"] == code);
  };
  const std::string chat = "/v1/chat/completions";
  const std::string msgs = R"("messages":[{"role":"user","content":"hi"}])";
  expect_400(chat, "{not json", nullptr, "invalid_json");
  expect_400(chat, "[1,2]", nullptr, "invalid_json");
  expect_400(chat, "", nullptr, "invalid_json");
  expect_400(chat, "{}", "messages", "missing_required_parameter");
  expect_400(chat, R"({"messages":"hi"})", "messages", "invalid_type");
  expect_400(chat, R"({"messages":[]})", "messages", "invalid_value");
  expect_400(chat, R"({"messages":[{"role":"robot","content":"hi"}]})", "messages[0].role", "invalid_value");
  expect_400(chat, R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", "messages[0].content[0].type",
             "unsupported_parameter");
  expect_400(chat, "{" + msgs + R"(,"temperature":"hot"})", "temperature", "invalid_type");
  expect_400(chat, "{" + msgs + R"(,"temperature":3})", "temperature", "invalid_value");
  expect_400(chat, "{" + msgs + R"(,"top_p":1.5})", "top_p", "invalid_value");
  expect_400(chat, "{" + msgs + R"(,"top_k":-1})", "top_k", "invalid_value");
  expect_400(chat, "{" + msgs + R"(,"max_tokens":"10"})", "max_tokens", "invalid_type");
  expect_400(chat, "{" + msgs + R"(,"max_tokens":-7})", "max_tokens", "invalid_value");
  expect_400(chat, "{" + msgs + R"(,"seed":1.5})", "seed", "invalid_type");
  expect_400(chat, "{" + msgs + R"(,"stream":"yes"})", "stream", "invalid_type");
  expect_400(chat, "{" + msgs + R"(,"stream_options":{"include_usage":true}})", "stream_options", nullptr);
  expect_400(chat, "{" + msgs + R"(,"stop":[1]})", "stop", "invalid_type");
  expect_400(chat, "{" + msgs + R"(,"stop":["a","b","c","d","e"]})", "stop", "invalid_value");
  expect_400(chat, "{" + msgs + R"(,"model":7})", "model", "invalid_type");
  expect_400(chat, "{" + msgs + R"(,"ignore_eos":1})", "ignore_eos", "invalid_type");
  expect_400(chat, "{" + msgs + R"(,"n":2})", "n", "unsupported_parameter");
  expect_400(chat, "{" + msgs + R"(,"tools":[{"type":"function","function":{"name":"f"}}]})", "tools", "unsupported_parameter");
  expect_400(chat, "{" + msgs + R"(,"response_format":{"type":"json_object"}})", "response_format", "unsupported_parameter");
  expect_400(chat, "{" + msgs + R"(,"logprobs":true})", "logprobs", "unsupported_parameter");
  expect_400(chat, "{" + msgs + R"(,"logit_bias":{"5":10}})", "logit_bias", "unsupported_parameter");
  expect_400(chat, "{" + msgs + R"(,"presence_penalty":1})", "presence_penalty", "unsupported_parameter");
  const std::string completions = "/v1/completions";
  expect_400(completions, "{}", "prompt", "missing_required_parameter");
  expect_400(completions, R"({"prompt":5})", "prompt", "invalid_type");
  expect_400(completions, R"({"prompt":""})", "prompt", "invalid_value");
  expect_400(completions, R"({"prompt":["a","b"]})", "prompt", "unsupported_parameter");
  expect_400(completions, R"({"prompt":[1,2,99999]})", "prompt", "invalid_value");
  expect_400(completions, R"({"prompt":"a","echo":true})", "echo", "unsupported_parameter");
  expect_400("/tokenize", R"({"content":5})", "content", "invalid_type");
  // Fields we do not act on, which do not change the answer, are accepted.
  CHECK(post_raw(port(), chat, "{" + msgs + R"(,"user":"u1","metadata":{},"n":1,"max_tokens":1,"tools":[]})").status == 200);
}

TEST_CASE("a prompt longer than the context is refused with context_length_exceeded") {
  json ids = json::array();
  for (int i = 0; i < 4100; ++i) ids.push_back(40 + i % 20);
  reply r = post(port(), "/v1/completions", {{"prompt", ids}, {"max_tokens", 1}});
  CHECK(r.status == 400);
  json e = error_of(r);
  CHECK(e["code"] == "context_length_exceeded");
  CHECK(e["message"].get<std::string>().find("4100") != std::string::npos);
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "word ";
  reply chat = post(port(), "/v1/chat/completions", chat_body(text, 1));
  CHECK(chat.status == 400);
  CHECK(error_of(chat)["param"] == "messages");
}

TEST_CASE("unknown routes and methods are 404 error objects") {
  reply r = get(port(), "/v1/nothing");
  CHECK(r.status == 404);
  CHECK(error_of(r)["type"] == "not_found_error");
  CHECK(post(port(), "/v1/models", json::object()).status == 404);
}

TEST_CASE("/metrics counts requests and tokens in Prometheus text") {
  const double before = metric(port(), "tg_requests_total");
  const double tokens = metric(port(), "tg_tokens_predicted_total");
  post(port(), "/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 3}, {"temperature", 0}});
  CHECK(metric(port(), "tg_requests_total") == before + 1);
  CHECK(metric(port(), "tg_tokens_predicted_total") > tokens);
  reply r = get(port(), "/metrics");
  CHECK(r.header("Content-Type").rfind("text/plain", 0) == 0);
  CHECK(r.body.find("# TYPE tg_requests_total counter") != std::string::npos);
  CHECK(r.body.find("tg_requests_deferred ") != std::string::npos);
}

TEST_CASE("a client that hangs up mid-stream frees the engine at once") {
  const double cancelled = metric(port(), "tg_requests_cancelled_total");
  json body = {{"prompt", "Once"}, {"max_tokens", -1}, {"temperature", 0}, {"stream", true}};  // to the end of the context
  auto t0 = std::chrono::steady_clock::now();
  event_stream s = stream(port(), "/v1/completions", body, 3);
  CHECK(s.chunks.size() == 3);
  CHECK_FALSE(s.done);
  CHECK(metric_reaches(port(), "tg_requests_cancelled_total", cancelled + 1, 5s));
  CHECK(metric_reaches(port(), "tg_requests_processing", 0, 1s));
  // The next request runs now, not after the abandoned one would have filled the context.
  reply next = post(port(), "/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 2}, {"temperature", 0}});
  CHECK(next.status == 200);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);

  SUBCASE("non-streaming too") {
    const double before = metric(port(), "tg_requests_cancelled_total");
    std::thread hang_up([] {
      auto c = client_for(port());
      c.set_read_timeout(0, 300'000);  // gives up after 0.3 s, closing the connection
      c.Post("/v1/completions", json{{"prompt", "Once"}, {"max_tokens", -1}, {"temperature", 0}}.dump(), "application/json");
    });
    hang_up.join();
    CHECK(metric_reaches(port(), "tg_requests_cancelled_total", before + 1, 5s));
  }
}

TEST_CASE("8 concurrent streams, one hanging up, decode together and match their solo greedy runs") {
  auto body = [](int i) {
    return json{{"prompt", "Story " + std::to_string(i) + ": once"}, {"max_tokens", 300}, {"temperature", 0},
                {"ignore_eos", true}, {"stream", true}};
  };
  std::vector<std::string> solo;
  for (int i = 0; i < 8; ++i) solo.push_back(stream_text(stream(port(), "/v1/completions", body(i))));
  CHECK(metric(port(), "tg_requests_processing_max") == 1);  // the cases so far ran one request at a time
  std::vector<event_stream> together(8);
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i)
    clients.emplace_back([&, i] { together[std::size_t(i)] = stream(port(), "/v1/completions", body(i), i == 5 ? 3 : SIZE_MAX); });
  // The shared server has 4 slots (--parallel's default): the streams run 4 at a time in one
  // decode pass each step. The server's own high-water mark says how many ran at once (polling
  // requests_processing from here missed it once, on a loaded machine).
  for (auto& c : clients) c.join();
  const double most = metric(port(), "tg_requests_processing_max");
  CHECK(most >= 2);
  CHECK(most <= 4);
  for (int i = 0; i < 8; ++i) {
    CAPTURE(i);
    if (i == 5) {
      CHECK_FALSE(together[5].done);
      continue;
    }
    CHECK(together[std::size_t(i)].done);
    CHECK(stream_text(together[std::size_t(i)]) == solo[std::size_t(i)]);
  }
  CHECK(metric_reaches(port(), "tg_requests_processing", 0, 5s));
}

TEST_CASE("the API key guards everything but /health; bodies and the queue have limits") {
  server_process guarded({"--max-context", "4096", "--api-key", "sekrit", "--max-body", "4096", "--queue-limit", "1",
                          "--parallel", "1"});
  const int p = guarded.port();
  const httplib::Headers key = {{"Authorization", "Bearer sekrit"}};
  CHECK(get(p, "/health").status == 200);
  reply none = get(p, "/v1/models");
  CHECK(none.status == 401);
  CHECK(error_of(none)["type"] == "authentication_error");
  CHECK(get(p, "/v1/models", {{"Authorization", "Bearer wrong"}}).status == 401);
  CHECK(get(p, "/metrics").status == 401);
  CHECK(post(p, "/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 1}}).status == 401);
  CHECK(get(p, "/v1/models", key).status == 200);
  CHECK(post(p, "/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 1}}, key).status == 200);

  reply big = post(p, "/v1/completions", {{"prompt", std::string(5000, 'a')}}, key);
  CHECK(big.status == 413);
  CHECK(error_of(big)["code"] == "body_too_large");

  // One request generating, one waiting: a third is refused with 503 and Retry-After.
  json endless = {{"prompt", "Once"}, {"max_tokens", -1}, {"temperature", 0}, {"stream", true}};
  std::atomic<bool> release{false};
  auto hold = [&] {
    auto c = client_for(p);
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.headers = key;
    req.body = endless.dump();
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [&](const char*, std::size_t, std::uint64_t, std::uint64_t) { return !release.load(); };
    c.send(req);
  };
  std::thread a(hold);
  // metric() sends no key, so the waits here read /metrics with one.
  auto metrics_show = [&](const std::string& line) {
    for (auto end = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < end;) {
      if (get(p, "/metrics", key).body.find("\n" + line + "\n") != std::string::npos) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  };
  REQUIRE(metrics_show("tg_requests_processing 1"));
  std::thread b(hold);
  bool queued = false;
  queued = metrics_show("tg_requests_deferred 1");
  CHECK(queued);
  reply busy = post(p, "/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 1}}, key);
  CHECK(busy.status == 503);
  REQUIRE_FALSE(busy.header("Retry-After").empty());
  CHECK(std::stoi(busy.header("Retry-After")) >= 1);
  CHECK(error_of(busy)["code"] == "queue_full");
  release = true;
  a.join();
  b.join();
  CHECK(guarded.stop(SIGINT) == 0);
}

TEST_CASE("SIGTERM ends an in-flight stream with an error event and exits cleanly") {
  json endless = {{"prompt", "Once"}, {"max_tokens", -1}, {"temperature", 0}, {"stream", true}};
  event_stream s;
  std::thread client([&] { s = stream(port(), "/v1/completions", endless); });
  REQUIRE(metric_reaches(port(), "tg_requests_processing", 1, 10s));
  const int status = shared_server().stop(SIGTERM);
  client.join();
  CHECK(status == 0);
  CHECK(shared_server().output().find("serve: stopped") != std::string::npos);
  REQUIRE_FALSE(s.chunks.empty());
  CHECK(s.chunks.back().contains("error"));
  CHECK(s.done);
}
