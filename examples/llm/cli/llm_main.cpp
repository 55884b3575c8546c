// llm_main.cpp: the llm command: generate text from a GGUF model, chat, benchmark, tokenize
// and dump logits. Everything but the options and the terminal is tg::llm (include/tg/llm/).
//
//   llm -m model.gguf -p "Once upon a time" -n 64
//   llm -m model.gguf --chat
//   llm -m model.gguf --benchmark 20
//   llm -m model.gguf --serve 8080
//   llm -m model.gguf --dump-logits out.f32 --tokens 1,450,4996
#include <algorithm>
#include <optional>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include <tg/llm/llm.hpp>
#include "examples/llm/cli/benchmark.hpp"
#include "examples/llm/cli/cli_options.hpp"
#include "examples/llm/cli/serve_command.hpp"
#include "llm/model/transformer.hpp"

namespace {

using namespace tg;

std::string read_prompt(const cli::cli_options& o) {
  if (o.prompt_file.empty()) return o.prompt;
  std::ifstream in(o.prompt_file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// --tokens as given, else the prompt text encoded (with BOS unless --no-bos).
std::vector<llm::token_id> prompt_ids(const cli::cli_options& o, const llm::model& m, const std::string& text) {
  if (!o.tokens.empty()) return o.tokens;
  return m.tokenize(text, !o.no_bos, false);
}

void dump_logits(const llm::model& m, std::span<const llm::token_id> ids, const std::string& path) {
  model::transformer& net = m.transformer();
  std::ofstream out(path, std::ios::binary);
  if (!out) throw usage_error(str("--dump-logits: cannot write ", path));
  if (std::int64_t(ids.size()) > net.max_context())
    throw usage_error(str("--dump-logits: ", ids.size(), " tokens do not fit the context of ", net.max_context()));
  for (std::size_t at = 0; at < ids.size(); at += std::size_t(net.chunk_size())) {
    auto n = std::min(std::size_t(net.chunk_size()), ids.size() - at);
    auto logits = net.forward(ids.subspan(at, n), std::int64_t(at), model::head::all);
    out.write(reinterpret_cast<const char*>(logits.data()), std::streamsize(logits.size() * 4));
  }
  if (!out) throw usage_error(str("--dump-logits: writing ", path, " failed"));
  log(log_level::info, str("wrote ", ids.size(), " x ", m.info().vocab, " logits to ", path));
}

// Streams each token's text to stdout as it comes.
bool print_token(llm::token_id, std::string_view text) {
  std::cout << text << std::flush;
  return true;
}

void chat(const llm::model& m, const llm::generate_options& options) {
  llm::chat conversation(m, options);
  std::string line;
  while (true) {
    std::cout << ">>> " << std::flush;
    if (!std::getline(std::cin, line)) break;
    conversation.say(line, print_token);
    std::cout << "\n\n";
  }
}

int run(const cli::cli_options& o) {
  cli::check_options(o);
  // Read once, at the first kernel compiled (runtime/tune/tuned_compile.cpp): set before the model opens.
  if (o.beam) setenv("TG_BEAM", std::to_string(*o.beam).c_str(), 1);
  const std::string prompt = read_prompt(o);
  // Only a run that generates warms up: --tokenize and --dump-logits compile what they use.
  const bool generates = !o.tokenize && o.dump_logits.empty();
  auto m = llm::model::open(o.model, {.device = o.device, .threads = o.threads.value_or(0),
                                      .max_context = o.max_context, .chunk_size = o.chunk_size,
                                      .sequences = o.serve_port ? o.parallel : 1, .cache = o.cache_type,
                                      .warm_up = generates, .graphs = !o.no_graphs});
  if (o.tokenize) {
    auto ids = m.tokenize(prompt, !o.no_bos, false);
    for (std::size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
    std::cout << "\n";
    return 0;
  }
  if (!o.dump_logits.empty()) {
    dump_logits(m, prompt_ids(o, m, prompt), o.dump_logits);
    return 0;
  }
  model::transformer& net = m.transformer();
  net.set_profiling(o.verbose);
  if (o.serve_port) {
    cli::run_serve(o, m);  // until SIGINT or SIGTERM
    return 0;
  }
  if (o.benchmark) {
    cli::run_benchmark(m, *o.benchmark, std::cout);  // with -v, logs each phase's kernel times
    return 0;
  }
  const llm::generate_options options{.max_tokens = o.max_tokens,
                                      .sampling = {.temperature = o.temperature, .top_k = o.top_k, .top_p = o.top_p},
                                      .seed = o.seed};
  if (o.chat) {
    chat(m, options);
    return 0;
  }
  llm::session session(m);
  bool first = true;
  // Behind the USB bridge, -v also counts its transfers (each is a round trip): the prompt's, then
  // the generated tokens'. Profiling launches kernel by kernel, so these are the launched counts.
  const backend& impl = m.device().impl();
  const std::optional<link_counts> link_start = impl.link_traffic();
  std::optional<link_counts> link_prompt;
  auto r = session.generate(prompt_ids(o, m, prompt), options, [&](llm::token_id id, std::string_view text) {
    if (first && o.verbose) {  // the prefill's kernel times, before decode's are gathered
      cli::log_profile("prefill", net);
      net.set_profiling(true);
      link_prompt = impl.link_traffic();
    }
    first = false;
    return print_token(id, text);
  });
  std::cout << "\n";
  if (o.verbose) {
    char line[200];
    std::snprintf(line, sizeof line, "prompt %lld tokens in %.3f s (%.2f tok/s), generated %zu tokens in %.3f s (%.2f tok/s)",
                  static_cast<long long>(r.prompt_tokens), r.prefill_seconds, double(r.prompt_tokens) / r.prefill_seconds,
                  r.tokens.size(), r.decode_seconds, double(r.tokens.size()) / r.decode_seconds);
    log(log_level::info, line);
    cli::log_profile("decode", net);
    if (const std::optional<link_counts> link_end = impl.link_traffic(); link_start && link_prompt && link_end) {
      const double steps = double(std::max<std::size_t>(r.tokens.size(), 2) - 1);
      std::snprintf(line, sizeof line,
                    "bridge: %llu USB transfers for the prompt, %.1f per generated token, %.1f of those polls while the "
                    "GPU worked (kernel by kernel under -v; --benchmark without -v counts replayed graphs)",
                    static_cast<unsigned long long>(link_prompt->transfers - link_start->transfers),
                    double(link_end->transfers - link_prompt->transfers) / steps,
                    double(link_end->waiting - link_prompt->waiting) / steps);
      log(log_level::info, line);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"llm: run a Llama/Qwen GGUF model with tg kernels"};
  tg::cli::cli_options options;
  tg::cli::add_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
