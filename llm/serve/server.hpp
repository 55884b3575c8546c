// server.hpp: `llm --serve`: an OpenAI-compatible HTTP server over a model, on cpp-httplib.
//
//   POST /v1/chat/completions, /v1/completions   OpenAI (streaming SSE or one JSON object)
//   GET  /v1/models, /v1/models/{id}              the one model
//   GET  /health                                  {"status":"ok"}; never needs the API key
//   POST /tokenize, /detokenize                   llama.cpp server's
//   GET  /metrics                                 Prometheus text
//   GET  /                                        the chat page (compiled in)
//
//   tg::serve::server s(model, {.port = 0});
//   int port = s.port();      // bound on construction
//   s.run();                  // until stop() (or SIGINT/SIGTERM under serve_until_signal)
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include <tg/llm/model.hpp>

namespace tg::serve {

struct server_options {
  std::string host = "127.0.0.1";  // loopback unless asked: the API has no other protection by default
  int port = 8080;                 // 0: any free port
  int parallel = 4;                // sequences generated at once; the model needs as many (model_options::sequences)
  std::size_t queue_limit = 16;    // requests waiting beyond those; more get 503 + Retry-After
  std::string api_key;             // non-empty: "Authorization: Bearer <key>" on all but /health and /
  std::size_t max_body_bytes = 8u << 20;
  int timeout_seconds = 600;       // socket read/write; long enough for a long prefill (llama.cpp: --timeout 600)
};

class server {
 public:
  // Binds the socket and starts the engine; throws usage_error when it cannot bind or the
  // model has fewer KV caches than options.parallel.
  server(const llm::model& m, server_options options);
  ~server();

  int port() const;
  // Serves until stop(); returns once in-flight requests have ended.
  void run();
  // Thread-safe: ends running and queued generations, stops accepting, makes run() return.
  void stop();

  struct state;

 private:
  std::unique_ptr<state> s_;
};

// Runs the server until SIGINT or SIGTERM, then stops it cleanly. Logs the address it listens on
// ("serve: listening on http://HOST:PORT").
void serve_until_signal(const llm::model& m, const server_options& options);

}  // namespace tg::serve
