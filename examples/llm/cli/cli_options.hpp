// cli_options.hpp: the llm command's options, parsed with CLI11.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tg/llm/options.hpp>

namespace CLI {
class App;
}

namespace tg::cli {

struct cli_options {
  std::string model, prompt, prompt_file, device = "CPU", dump_logits;
  std::vector<std::int32_t> tokens;  // --tokens 1,2,3 for --dump-logits
  std::int64_t max_tokens = 256, max_context = 4096, chunk_size = 32;
  llm::cache_type cache_type = llm::cache_type::automatic;  // --cache-type
  float temperature = 0.0f, top_p = 1.0f;
  std::uint32_t top_k = 0;
  std::uint64_t seed = 0;
  std::optional<int> threads;
  std::optional<int> beam;       // TG_BEAM for this run
  std::optional<int> benchmark;  // tokens to time
  // --serve [PORT]: the HTTP server (llm/serve/server.hpp)
  std::optional<int> serve_port;
  std::string host = "127.0.0.1", api_key;
  int parallel = 4, timeout = 600;
  std::size_t queue_limit = 16, max_body = 8u << 20;
  bool chat = false, tokenize = false, no_bos = false, verbose = false, no_graphs = false;
};

// Declares every option on `app`, writing into `o`.
void add_options(CLI::App& app, cli_options& o);

// Checks combinations CLI11 cannot (a prompt for generation, tokens for dump-logits);
// throws usage_error.
void check_options(const cli_options& o);

}  // namespace tg::cli
