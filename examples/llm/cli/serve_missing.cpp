// serve_missing.cpp: --serve in a build without cpp-httplib / nlohmann-json.
#include "examples/llm/cli/serve_command.hpp"

#include <tg/core/error.hpp>

namespace tg::cli {

void run_serve(const cli_options&, const llm::model&) {
  throw usage_error("--serve: this llm was built without the HTTP server; install libcpp-httplib-dev and "
                    "nlohmann-json3-dev, then reconfigure (meson setup --reconfigure build)");
}

}  // namespace tg::cli
