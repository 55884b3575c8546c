// serve_command.hpp: --serve: runs the HTTP server (llm/serve/) on the opened model until
// SIGINT or SIGTERM. Built without cpp-httplib, it says so instead.
#pragma once
#include <tg/llm/model.hpp>
#include "examples/llm/cli/cli_options.hpp"

namespace tg::cli {

void run_serve(const cli_options& o, const llm::model& m);

}  // namespace tg::cli
