// answer_stream.cpp: SSE and whole-JSON answers over a job; see answer_stream.hpp.
#include "llm/serve/answer_stream.hpp"

#include <chrono>

#include "llm/serve/api_error.hpp"
#include "llm/serve/openai_objects.hpp"

namespace tg::serve {
namespace {

using json = nlohmann::ordered_json;
using namespace std::chrono_literals;

// How often a waiting handler looks at the socket: a client that leaves frees its job
// within this, plus one forward pass.
constexpr auto poll_interval = 100ms;
// An SSE comment while nothing else is sent (a long prefill), so that clients with
// first-byte watchdogs see the connection alive (llama.cpp: --sse-ping-interval).
constexpr auto ping_interval = 15s;

api_error stream_error(const job_update& u) {
  if (u.finished == finish_reason::shutdown)
    return api_error(503, "unavailable_error", "the server is shutting down", std::nullopt, "shutting_down");
  return api_error(500, "server_error", "generation failed: " + u.error);
}

struct stream_state {
  std::shared_ptr<job> j;
  answer_header header;
  bool started = false;
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
};

bool send_event(httplib::DataSink& sink, stream_state& st, const std::string& payload) {
  const std::string event = "data: " + payload + "\n\n";
  st.last_write = std::chrono::steady_clock::now();
  return sink.write(event.data(), event.size());
}

// One call of the content provider: false ends the response (and, unless sink.done() was
// called, tells httplib the stream was cut off, which the releaser turns into a cancel).
bool stream_step(stream_state& st, httplib::DataSink& sink) {
  const generation_request& r = st.j->request;
  if (!st.started) {
    st.started = true;
    // The role first, on its own (llama.cpp server and OpenAI do the same).
    json first = r.kind == endpoint_kind::chat ? json{{"role", "assistant"}, {"content", ""}} : json("");
    return send_event(sink, st, to_wire(chunk_object(st.header, r, first, nullptr)));
  }
  job_update u = st.j->wait(poll_interval);
  if (!sink.is_writable()) return false;
  if (!u.text.empty()) {
    json piece = r.kind == endpoint_kind::chat ? json{{"content", u.text}} : json(u.text);
    if (!send_event(sink, st, to_wire(chunk_object(st.header, r, piece, nullptr)))) return false;
  }
  switch (u.finished) {
    case finish_reason::none:
      if (std::chrono::steady_clock::now() - st.last_write > ping_interval) {
        st.last_write = std::chrono::steady_clock::now();
        return sink.write(": ping\n\n", 8);
      }
      return true;
    case finish_reason::cancelled:
      return false;
    case finish_reason::stop:
    case finish_reason::length: {
      json last = r.kind == endpoint_kind::chat ? json::object() : json("");
      if (!send_event(sink, st, to_wire(chunk_object(st.header, r, last, finish_reason_name(u.finished))))) return false;
      if (r.include_usage && !send_event(sink, st, to_wire(usage_chunk_object(st.header, u.stats)))) return false;
      break;
    }
    case finish_reason::shutdown:
    case finish_reason::error:
      // A `data:` event carrying `error`, which openai-node throws as an APIError (core/streaming.ts).
      if (!send_event(sink, st, to_wire(error_body(stream_error(u))))) return false;
      break;
  }
  if (!send_event(sink, st, "[DONE]")) return false;
  sink.done();
  return true;
}

}  // namespace

void send_streamed(std::shared_ptr<job> j, httplib::Response& res) {
  auto st = std::make_shared<stream_state>();
  st->header = new_answer_header(j->request);
  st->j = j;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream", [st](std::size_t, httplib::DataSink& sink) { return stream_step(*st, sink); },
      [j](bool success) {
        if (!success) j->cancel();
      });
}

void send_whole(std::shared_ptr<job> j, httplib::Response& res) {
  struct whole_state {
    std::shared_ptr<job> j;
    answer_header header;
    std::string text;
  };
  auto st = std::make_shared<whole_state>(whole_state{j, new_answer_header(j->request), {}});
  res.set_chunked_content_provider(
      "application/json",
      [st](std::size_t, httplib::DataSink& sink) {
        job_update u = st->j->wait(poll_interval);
        if (!sink.is_writable()) return false;
        st->text += u.text;
        if (u.finished == finish_reason::none) return true;
        if (u.finished == finish_reason::cancelled) return false;
        const bool ok = u.finished == finish_reason::stop || u.finished == finish_reason::length;
        // The status went out with the headers; a late fault can only be told in the body.
        std::string body = to_wire(ok ? final_object(st->header, st->text, u.finished, u.stats) : error_body(stream_error(u)));
        if (!sink.write(body.data(), body.size())) return false;
        sink.done();
        return true;
      },
      [j](bool success) {
        if (!success) j->cancel();
      });
}

}  // namespace tg::serve
