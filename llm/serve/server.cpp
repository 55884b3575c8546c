// server.cpp: routes, API key, limits and error objects of `llm --serve`; see server.hpp.
#include "llm/serve/server.hpp"

#include <chrono>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <tg/core/error.hpp>
#include <tg/log.hpp>
#include "llm/serve/answer_stream.hpp"
#include "llm/serve/api_error.hpp"
#include "llm/serve/chat_page.hpp"
#include "llm/serve/engine.hpp"
#include "llm/serve/metrics.hpp"
#include "llm/serve/openai_objects.hpp"
#include "llm/serve/request_parse.hpp"

namespace tg::serve {
namespace {

using json = nlohmann::ordered_json;
using httplib::Request;
using httplib::Response;

void send_json(Response& res, const json& body, int status = 200) {
  res.status = status;
  res.set_content(to_wire(body), "application/json");
}

void send_error(Response& res, const api_error& e) {
  if (e.retry_after_seconds > 0) res.set_header("Retry-After", std::to_string(e.retry_after_seconds));
  send_json(res, error_body(e), e.status);
}

// Every handler's faults become OpenAI error objects: api_error as it says, anything else a
// 500 (a fault of ours, never the client's).
template <class Handler>
httplib::Server::Handler guarded(Handler handler) {
  return [handler](const Request& req, Response& res) {
    try {
      handler(req, res);
    } catch (const api_error& e) {
      send_error(res, e);
    } catch (const usage_error& e) {  // the library refusing what the client sent
      send_error(res, invalid_request(e.what()));
    } catch (const std::exception& e) {
      log(log_level::error, str("serve: ", req.method, " ", req.path, " failed: ", e.what()));
      send_error(res, api_error(500, "server_error", str("internal error: ", e.what())));
    }
  };
}

// Compares without stopping at the first difference, so timing does not reveal the key.
bool same_secret(std::string_view a, std::string_view b) {
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) diff |= unsigned(a[i] ^ b[i]);
  return diff == 0;
}

std::string model_id(const llm::model& m) { return m.info().name.empty() ? std::string("tg-model") : m.info().name; }

json model_object(const llm::model& m, std::int64_t created) {
  const llm::model_info& i = m.info();
  return {{"id", model_id(m)},
          {"object", "model"},
          {"created", created},
          {"owned_by", "tg"},
          {"meta",
           {{"architecture", i.architecture}, {"n_vocab", i.vocab}, {"n_ctx_train", i.context_length},
            {"n_ctx", i.max_context}, {"n_embd", i.dim}, {"n_params", i.parameters}, {"size", i.file_bytes},
            {"chat_style", i.chat_style}}}};
}

}  // namespace

struct server::state {
  const llm::model& model;
  server_options options;
  metrics counters;
  engine gen;
  httplib::Server http;
  int port = 0;
  std::int64_t created;

  state(const llm::model& m, server_options o)
      : model(m), options(std::move(o)), gen(m, {.slots = options.parallel, .queue_limit = options.queue_limit}, counters),
        created(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()) {}

  void generation(const Request& req, Response& res, endpoint_kind kind) {
    json body = parse_body(req.body);
    generation_request r = kind == endpoint_kind::chat ? parse_chat_request(body, model) : parse_completion_request(body, model);
    r.model = model_id(model);
    auto j = std::make_shared<job>(std::move(r));
    gen.submit(j);
    if (j->request.stream) {
      send_streamed(j, res);
    } else {
      send_whole(j, res);
    }
  }

  void routes() {
    auto chat = guarded([this](const Request& req, Response& res) { generation(req, res, endpoint_kind::chat); });
    auto completion = guarded([this](const Request& req, Response& res) { generation(req, res, endpoint_kind::completion); });
    // The /v1 paths are OpenAI's; the bare ones are what llama.cpp's server also answers.
    http.Post("/v1/chat/completions", chat);
    http.Post("/chat/completions", chat);
    http.Post("/v1/completions", completion);
    http.Post("/completions", completion);
    auto health = guarded([](const Request&, Response& res) { send_json(res, {{"status", "ok"}}); });
    http.Get("/health", health);
    http.Get("/v1/health", health);
    auto models = guarded([this](const Request&, Response& res) {
      send_json(res, {{"object", "list"}, {"data", json::array({model_object(model, created)})}});
    });
    http.Get("/v1/models", models);
    http.Get("/models", models);
    http.Get(R"(/v1/models/(.+))", guarded([this](const Request& req, Response& res) {
      if (req.matches[1] != model_id(model))
        throw api_error(404, "invalid_request_error", str("the model '", std::string(req.matches[1]), "' does not exist; this server has '",
                                                          model_id(model), "'"), "model", "model_not_found");
      send_json(res, model_object(model, created));
    }));
    http.Post("/tokenize", guarded([this](const Request& req, Response& res) { send_json(res, answer_tokenize(parse_body(req.body), model)); }));
    http.Post("/detokenize",
              guarded([this](const Request& req, Response& res) { send_json(res, answer_detokenize(parse_body(req.body), model)); }));
    http.Get("/metrics", guarded([this](const Request&, Response& res) {
      res.set_content(render_prometheus(counters), "text/plain; version=0.0.4");
    }));
    http.Get("/", [](const Request&, Response& res) {
      res.set_header("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'");
      res.set_content(std::string(chat_page_html()), "text/html; charset=utf-8");
    });
  }

  void limits() {
    // The API key: every path but /health and the page itself (which holds no data; it asks
    // for the key and sends it with its API calls).
    http.set_pre_routing_handler([this](const Request& req, Response& res) {
      if (options.api_key.empty() || req.path == "/health" || req.path == "/v1/health" || (req.method == "GET" && req.path == "/"))
        return httplib::Server::HandlerResponse::Unhandled;
      const std::string given = req.get_header_value("Authorization");
      if (given.rfind("Bearer ", 0) == 0 && same_secret(std::string_view(given).substr(7), options.api_key))
        return httplib::Server::HandlerResponse::Unhandled;
      res.set_header("WWW-Authenticate", "Bearer");
      send_error(res, api_error(401, "authentication_error",
                                given.empty() ? "an API key is required: send 'Authorization: Bearer <key>'" : "invalid API key",
                                std::nullopt, "invalid_api_key"));
      return httplib::Server::HandlerResponse::Handled;
    });
    // Statuses httplib sets itself (404 no route, 413 body too large, 400 bad request line)
    // get an error object too.
    http.set_error_handler([](const Request& req, Response& res) {
      if (!res.body.empty()) return;
      if (res.status == 404) {
        send_error(res, api_error(404, "not_found_error", str("no route for ", req.method, " ", req.path)));
      } else if (res.status == 413) {
        send_error(res, invalid_request("the request body is larger than the server's --max-body limit", std::nullopt, "body_too_large"));
        res.status = 413;
      } else {
        send_error(res, api_error(res.status, res.status >= 500 ? "server_error" : "invalid_request_error",
                                  str("HTTP ", res.status, " for ", req.method, " ", req.path)));
      }
    });
    http.set_payload_max_length(options.max_body_bytes);
    http.set_read_timeout(options.timeout_seconds, 0);
    http.set_write_timeout(options.timeout_seconds, 0);
    // A streaming answer holds its worker thread until it ends: enough workers for every
    // generating and queued request, plus a few for /health, /metrics and the page, so that
    // a full queue is answered with 503 instead of waiting silently for a worker.
    const std::size_t workers = std::size_t(options.parallel) + options.queue_limit + 4;
    http.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  }
};

server::server(const llm::model& m, server_options options) : s_(std::make_unique<state>(m, std::move(options))) {
  s_->routes();
  s_->limits();
  if (s_->options.port == 0) {
    s_->port = s_->http.bind_to_any_port(s_->options.host);
  } else {
    s_->port = s_->http.bind_to_port(s_->options.host, s_->options.port) ? s_->options.port : -1;
  }
  if (s_->port <= 0)
    throw usage_error(str("serve: cannot listen on ", s_->options.host, ":", s_->options.port, " (in use, or not an address of this machine?)"));
}

server::~server() { stop(); }

int server::port() const { return s_->port; }

void server::run() { s_->http.listen_after_bind(); }

void server::stop() {
  s_->gen.shutdown();  // in-flight answers end first, so their worker threads can be joined
  s_->http.stop();
}

}  // namespace tg::serve
