// serve_command.cpp: --serve and its options, handed to tg::serve.
#include "examples/llm/cli/serve_command.hpp"

#include "llm/serve/server.hpp"

namespace tg::cli {

void run_serve(const cli_options& o, const llm::model& m) {
  serve::serve_until_signal(m, {.host = o.host, .port = *o.serve_port, .parallel = o.parallel, .queue_limit = o.queue_limit,
                                .api_key = o.api_key, .max_body_bytes = o.max_body, .timeout_seconds = o.timeout});
}

}  // namespace tg::cli
