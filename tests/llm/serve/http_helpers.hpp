// http_helpers.hpp: small HTTP calls for the server tests, on cpp-httplib's client: JSON in
// and out, and Server-Sent Events read chunk by chunk (optionally hanging up early).
#pragma once
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace tg::test {

using nlohmann::json;

struct reply {
  int status = 0;           // 0: no answer (connection failed)
  httplib::Headers headers;
  std::string body;
  json parsed() const { return json::parse(body); }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

inline httplib::Client client_for(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(120, 0);
  c.set_connection_timeout(10, 0);
  return c;
}

inline reply to_reply(const httplib::Result& r) {
  if (!r) return {};
  return {r->status, r->headers, r->body};
}

inline reply get(int port, const std::string& path, const httplib::Headers& headers = {}) {
  auto c = client_for(port);
  return to_reply(c.Get(path.c_str(), headers));
}

inline reply post_raw(int port, const std::string& path, const std::string& body, const httplib::Headers& headers = {}) {
  auto c = client_for(port);
  return to_reply(c.Post(path.c_str(), headers, body, "application/json"));
}

inline reply post(int port, const std::string& path, const json& body, const httplib::Headers& headers = {}) {
  return post_raw(port, path, body.dump(), headers);
}

struct event_stream {
  int status = 0;
  std::string content_type;
  std::vector<json> chunks;  // every `data:` payload but [DONE], in order
  bool done = false;         // the stream ended with data: [DONE]
  bool other_after_done = false;
};

// POSTs `body` and reads the SSE answer; after `hang_up_after` chunks it closes the connection.
inline event_stream stream(int port, const std::string& path, const json& body,
                           std::size_t hang_up_after = std::numeric_limits<std::size_t>::max(),
                           const httplib::Headers& headers = {}) {
  auto c = client_for(port);
  event_stream out;
  std::string buffered;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers = headers;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.response_handler = [&](const httplib::Response& res) {
    out.status = res.status;
    out.content_type = res.get_header_value("Content-Type");
    return true;
  };
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    buffered.append(data, n);
    for (std::size_t end; (end = buffered.find("\n\n")) != std::string::npos;) {
      std::string event = buffered.substr(0, end);
      buffered.erase(0, end + 2);
      if (event.rfind("data: ", 0) != 0) continue;  // comments (": ping")
      std::string payload = event.substr(6);
      if (out.done) out.other_after_done = true;
      if (payload == "[DONE]") {
        out.done = true;
      } else {
        out.chunks.push_back(json::parse(payload));
      }
    }
    return out.chunks.size() < hang_up_after;
  };
  auto r = c.send(req);
  if (r && out.status == 0) out.status = r->status;
  return out;
}

// The text of a stream: chat deltas' content or completion chunks' text.
inline std::string stream_text(const event_stream& s) {
  std::string text;
  for (const json& c : s.chunks) {
    if (!c.contains("choices") || c["choices"].empty()) continue;
    const json& choice = c["choices"][0];
    if (choice.contains("delta") && choice["delta"].contains("content")) text += choice["delta"]["content"].get<std::string>();
    if (choice.contains("text")) text += choice["text"].get<std::string>();
  }
  return text;
}

}  // namespace tg::test
