// llm_main.cpp: the llm command: generate text from a GGUF model, chat, benchmark, tokenize
// and dump logits.
//
//   llm -m model.gguf -p "Once upon a time" -n 64
//   llm -m model.gguf --chat
//   llm -m model.gguf --benchmark 20
//   llm -m model.gguf --dump-logits out.f32 --tokens 1,450,4996
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/benchmark.hpp"
#include "cli/cli_options.hpp"
#include "cli/generate.hpp"
#include "gguf/gguf_file.hpp"
#include "tokenizer/chat_template.hpp"

namespace {

using namespace tg;
using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

// 1234567 -> "1,234,567"
std::string grouped(std::uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string s;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

std::string read_prompt(const cli::cli_options& o) {
  if (o.prompt_file.empty()) return o.prompt;
  std::ifstream in(o.prompt_file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// --tokens as given, else the prompt text encoded (with BOS unless --no-bos).
std::vector<std::int32_t> prompt_ids(const cli::cli_options& o, const tokenizer::tokenizer& tok, const std::string& text) {
  if (!o.tokens.empty()) return o.tokens;
  return tok.encode(text, !o.no_bos, false);
}

std::uint64_t parameter_count(const gguf::file& f) {
  std::uint64_t n = 0;
  for (const auto& t : f.tensors()) n += t.element_count();
  if (f.find_tensor("output.weight") == nullptr) n += f.get_tensor("token_embd.weight").element_count();
  return n;
}

void dump_logits(model::transformer& m, std::span<const std::int32_t> ids, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw usage_error(str("--dump-logits: cannot write ", path));
  if (std::int64_t(ids.size()) > m.max_context())
    throw usage_error(str("--dump-logits: ", ids.size(), " tokens do not fit the context of ", m.max_context()));
  for (std::size_t at = 0; at < ids.size(); at += std::size_t(m.chunk_size())) {
    auto n = std::min(std::size_t(m.chunk_size()), ids.size() - at);
    auto logits = m.forward(ids.subspan(at, n), std::int64_t(at), model::head::all);
    out.write(reinterpret_cast<const char*>(logits.data()), std::streamsize(logits.size() * 4));
  }
  if (!out) throw usage_error(str("--dump-logits: writing ", path, " failed"));
  std::fprintf(stderr, "wrote %zu x %lld logits to %s\n", ids.size(), static_cast<long long>(m.config().vocab), path.c_str());
}

void chat(model::session& session, const tokenizer::tokenizer& tok, sampling::sampler& sampler, std::int64_t max_tokens) {
  auto tmpl = tokenizer::chat_template::for_vocabulary(tok.vocab());
  std::vector<tokenizer::chat_message> history;
  std::string line;
  while (true) {
    std::cout << ">>> " << std::flush;
    if (!std::getline(std::cin, line)) break;
    history.push_back({"user", line});
    auto ids = tok.encode(tmpl.render(history), false, true);
    auto r = cli::generate(session, tok, sampler, ids, max_tokens, std::cout);
    std::cout << "\n\n";
    history.push_back({"assistant", tok.decode(r.tokens)});
  }
}

int run(const cli::cli_options& o) {
  cli::check_options(o);
  if (o.threads) setenv("TG_THREADS", std::to_string(*o.threads).c_str(), 1);
  auto t0 = clock_type::now();
  std::fprintf(stderr, "loading %s\n", o.model.c_str());
  auto file = gguf::file::open(o.model);
  auto tok = tokenizer::tokenizer::from_gguf(file);
  std::fprintf(stderr, "tokenizer: %zu tokens (%s)\n", tok.size(),
               tok.model() == tokenizer::tokenizer::kind::sentencepiece ? "SentencePiece" : "byte-level BPE");
  const std::string prompt = read_prompt(o);
  if (o.tokenize) {
    auto ids = tok.encode(prompt, !o.no_bos, false);
    for (std::size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
    std::cout << "\n";
    return 0;
  }
  device dev(o.device);
  model::transformer m(dev, file, {.max_context = o.max_context, .chunk_size = o.chunk_size});
  std::fprintf(stderr, "using model \"%s\" with %s bytes and %s params, max context %lld on %s (%.2f s)\n",
               m.config().name.c_str(), grouped(file.bytes().size()).c_str(), grouped(parameter_count(file)).c_str(),
               static_cast<long long>(m.max_context()), dev.name().c_str(), since(t0));
  if (!o.dump_logits.empty()) {
    dump_logits(m, prompt_ids(o, tok, prompt), o.dump_logits);
    return 0;
  }
  auto tw = clock_type::now();
  std::fprintf(stderr, "warming up (prefill chunk of %lld and decode)...", static_cast<long long>(m.chunk_size()));
  model::warm_up(m);
  std::fprintf(stderr, " %.2f s, %d kernels compiled\n", since(tw), dev.stats().compiled);
  m.set_profiling(o.verbose);
  if (o.benchmark) {
    cli::run_benchmark(m, tok, *o.benchmark, std::cout);  // with -v, prints each phase's kernel times
    return 0;
  }
  sampling::sampler sampler({.temperature = o.temperature, .top_k = o.top_k, .top_p = o.top_p}, o.seed);
  model::session session(m);
  if (o.chat) {
    chat(session, tok, sampler, o.max_tokens);
    return 0;
  }
  auto ids = prompt_ids(o, tok, prompt);
  auto print_prefill_profile = [&] {
    std::fprintf(stderr, "prefill kernel time by kernel:\n%s", m.profile_report().c_str());
    m.set_profiling(true);  // from here on, decode's
  };
  auto r = cli::generate(session, tok, sampler, ids, o.max_tokens, std::cout,
                         o.verbose ? std::function<void()>(print_prefill_profile) : std::function<void()>());
  std::cout << "\n";
  if (o.verbose)
    std::fprintf(stderr, "prompt %lld tokens in %.3f s (%.2f tok/s), generated %zu tokens in %.3f s (%.2f tok/s)\n",
                 static_cast<long long>(r.prompt_tokens), r.prefill_seconds, double(r.prompt_tokens) / r.prefill_seconds,
                 r.tokens.size(), r.decode_seconds, double(r.tokens.size()) / r.decode_seconds);
  if (o.verbose) std::fprintf(stderr, "decode kernel time by kernel:\n%s", m.profile_report().c_str());
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
