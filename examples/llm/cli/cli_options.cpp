// cli_options.cpp: option declarations and the checks across options.
#include "examples/llm/cli/cli_options.hpp"

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include <tg/core/error.hpp>

namespace tg::cli {

void add_options(CLI::App& app, cli_options& o) {
  app.add_option("-m,--model", o.model, "GGUF model file")->required()->check(CLI::ExistingFile);
  auto* prompt = app.add_option("-p,--prompt", o.prompt, "prompt text");
  app.add_option("--prompt-file", o.prompt_file, "read the prompt from a file")->check(CLI::ExistingFile)->excludes(prompt);
  app.add_option("-n,--max-tokens", o.max_tokens, "most tokens to generate")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--temperature", o.temperature, "sampling temperature; 0 is greedy")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--top-k", o.top_k, "keep the k most likely tokens; 0: off")->capture_default_str();
  app.add_option("--top-p", o.top_p, "keep the most likely tokens whose mass reaches p; 1: off")->capture_default_str();
  app.add_option("--seed", o.seed, "random seed for sampling")->capture_default_str();
  app.add_option("--max-context", o.max_context, "KV-cache length (capped at the model's context)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  const std::map<std::string, llm::cache_type> cache_types{
      {"auto", llm::cache_type::automatic}, {"f32", llm::cache_type::f32}, {"f16", llm::cache_type::f16}};
  app.add_option("--cache-type", o.cache_type,
                 "KV-cache elements: f32, f16, or auto (the default: f32 for an F32 model, f16 for a quantized one)")
      ->transform(CLI::CheckedTransformer(cache_types))->option_text("f32|f16|auto");
  app.add_option("--chunk-size", o.chunk_size, "prompt tokens per forward call")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--threads", o.threads, "CPU threads (default: all cores, or TG_THREADS)")->check(CLI::PositiveNumber);
  app.add_flag("--chat", o.chat, "interactive chat on stdin with the model's chat template");
  app.add_option("--benchmark", o.benchmark, "time N generated tokens, then prefill and decode rates")
      ->check(CLI::PositiveNumber);
  app.add_option("--serve", o.serve_port, "serve an OpenAI-compatible HTTP API and a chat page on PORT (default 8080; 0: any free port)")
      ->expected(0, 1)->default_str("8080")->check(CLI::Range(0, 65535));
  app.add_option("--host", o.host, "--serve: the address to listen on (0.0.0.0: every interface)")->capture_default_str();
  app.add_option("--api-key", o.api_key, "--serve: require 'Authorization: Bearer KEY' (all but /health)");
  app.add_option("--parallel", o.parallel, "--serve: sequences generated at once (continuous batching; each has its own --max-context KV cache)")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--queue-limit", o.queue_limit, "--serve: requests waiting beyond those being generated; more get 503")
      ->capture_default_str();
  app.add_option("--max-body", o.max_body, "--serve: largest request body in bytes")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--timeout", o.timeout, "--serve: socket read/write timeout in seconds")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--device", o.device,
                 "device to run on: CPU; AMD or AMD:<n> (a card, PCI ones first), AMD:PCI:<n>, AMD:USB:<n> (behind a USB4/USB3 dock), "
                 "AMD:EMU[:gfx11|gfx1101|gfx12|gfx1201][:usb] (the emulated GPU, slow); NV or NV:<n> (an NVIDIA GPU through its driver)")
      ->capture_default_str();
  app.add_option("--dump-logits", o.dump_logits, "write float32 logits (n_vocab per position) of the prompt or --tokens");
  app.add_option("--tokens", o.tokens, "the prompt as token ids, e.g. 1,2,3 (instead of --prompt)")->delimiter(',');
  app.add_flag("--tokenize", o.tokenize, "print the prompt's token ids on one line and exit");
  app.add_flag("--no-bos", o.no_bos, "do not prepend BOS when encoding the prompt");
  app.add_option("--beam", o.beam,
                 "BEAM search of width N for each kernel's schedule at its first launch (warm-up searches them all), "
                 "kept in the tuning cache for later runs (as TG_BEAM=N; tg-tune --list shows them). CPU: loop shapes "
                 "timed in forked workers; AMD:EMU: GPU schedules ranked by their modeled time on the card the emulated "
                 "processor stands for; AMD cards: GPU schedules timed on the card by GPU timestamps; NV: timed by "
                 "CUDA events in a worker process (tg-nv-worker), so a faulting candidate cannot harm the model's context")
      ->check(CLI::Range(0, 64));
  app.add_flag("--no-graphs", o.no_graphs,
               "on a GPU, launch a decode step's kernels one by one instead of replaying its captured graph (one submission per token; on NV a CUDA graph, or with TG_NV_GRAPHS=0 a list of launches); the CPU always launches them one by one");
  app.add_flag("-v,--verbose", o.verbose,
               "print timings and the time of every kernel, prefill and decode apart (synchronizes after every launch)");
}

void check_options(const cli_options& o) {
  const bool has_text = !o.prompt.empty() || !o.prompt_file.empty(), has_prompt = has_text || !o.tokens.empty();
  if (o.tokenize && !has_text) throw usage_error("--tokenize needs --prompt or --prompt-file");
  if (has_text && !o.tokens.empty()) throw usage_error("give the prompt as text or as --tokens, not both");
  if (!o.dump_logits.empty() && !has_prompt) throw usage_error("--dump-logits needs --tokens 1,2,3 or a prompt");
  if (o.top_p <= 0.0f || o.top_p > 1.0f) throw usage_error("--top-p must be in (0, 1]");
  const int modes = int(o.chat) + int(o.benchmark.has_value()) + int(!o.dump_logits.empty()) + int(o.tokenize) +
                    int(o.serve_port.has_value());
  if (modes > 1) throw usage_error("choose one of --chat, --benchmark, --dump-logits, --tokenize and --serve");
  if (modes == 0 && !has_prompt)
    throw usage_error("nothing to do: give --prompt, --prompt-file, --tokens, --chat, --benchmark, --dump-logits or --serve");
  if (o.serve_port && has_prompt) throw usage_error("--serve takes its prompts from HTTP requests: drop --prompt/--tokens");
}

}  // namespace tg::cli
