// llm_synth.cpp: the llm-synth command: writes a random-weight GGUF model of a chosen shape.
//
//   llm-synth -o tiny.gguf --arch qwen3 --type Q4_K_M --n-layer 2 --seed 7
//   llm-synth -o lookalike.gguf --preset llama3.2-1b --type Q6_K --vocab ggml-vocab-llama-bpe.gguf
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "llm/gguf/gguf_file.hpp"
#include "llm/synth/model_presets.hpp"
#include "llm/synth/model_writer.hpp"

namespace {

using namespace tg::synth;

struct cli_options {
  std::string output, arch = "llama", preset, type = "F32", vocab_path, name;
  std::optional<std::uint32_t> n_embd, n_layer, n_head, n_head_kv, n_ff, head_dim, context_length;
  std::optional<float> rope_theta, rms_eps, weight_std, norm_std;
  std::optional<std::uint64_t> vocab_size;
  std::uint64_t seed = 0;
  bool untied = false, tied = false, qkv_bias = false, no_qkv_bias = false, rope_freqs = false;
  bool random_norms = false, quiet = false, list_presets = false;
  unsigned threads = 0;
};

template <class T>
void override_with(T& field, const std::optional<T>& value) {
  if (value) field = *value;
}

model_spec spec_from(const cli_options& o, CLI::App& app) {
  model_spec spec;
  if (!o.preset.empty()) {
    const model_preset* p = find_preset(o.preset);
    if (p == nullptr) throw tg::usage_error("llm-synth: unknown preset '" + o.preset + "' (see --list-presets)");
    if (app.count("--arch") > 0 && parse_architecture(o.arch) != p->arch)
      throw tg::usage_error("llm-synth: --arch " + o.arch + " contradicts --preset " + o.preset);
    spec = spec_from_preset(*p);
  } else {
    spec = default_spec(parse_architecture(o.arch));
  }
  model_dims& d = spec.dims;
  override_with(d.n_embd, o.n_embd);
  override_with(d.n_layer, o.n_layer);
  override_with(d.n_head, o.n_head);
  override_with(d.n_head_kv, o.n_head_kv);
  override_with(d.n_ff, o.n_ff);
  override_with(d.head_dim, o.head_dim);
  override_with(d.context_length, o.context_length);
  override_with(d.rope_theta, o.rope_theta);
  override_with(d.rms_eps, o.rms_eps);
  override_with(spec.weight_std, o.weight_std);
  override_with(spec.norm_std, o.norm_std);
  spec.format = parse_weight_format(o.type);
  if (o.untied) spec.tied_output = false;
  if (o.tied) spec.tied_output = true;
  if (o.qkv_bias) spec.qkv_bias = true;
  if (o.no_qkv_bias) spec.qkv_bias = false;
  if (o.rope_freqs) spec.rope_freqs = true;
  spec.random_norms = o.random_norms;
  spec.seed = o.seed;
  if (!o.name.empty()) spec.name = o.name;
  validate(spec);
  return spec;
}

vocabulary vocabulary_from(const cli_options& o, const model_spec& spec) {
  vocabulary vocab = o.vocab_path.empty() ? byte_level_vocabulary(spec.arch)
                                          : copy_vocabulary(tg::gguf::file::open(o.vocab_path));
  std::optional<std::uint64_t> size = o.vocab_size;
  // A preset pads to the real model's embedding size unless told otherwise.
  if (!size && !o.preset.empty()) size = find_preset(o.preset)->vocab_size;
  if (size && *size > vocab.token_count) pad_vocabulary(vocab, *size);
  else if (size && *size < vocab.token_count && o.vocab_size)
    throw tg::usage_error("llm-synth: --vocab-size " + std::to_string(*size) + " is smaller than the vocabulary (" +
                          std::to_string(vocab.token_count) + " tokens)");
  return vocab;
}

// "1.23 GB" or "45.6 MB": the unit that keeps small models readable.
std::string human_size(std::uint64_t bytes) {
  char text[32];
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) std::snprintf(text, sizeof text, "%.2f GB", b / 1e9);
  else std::snprintf(text, sizeof text, "%.1f MB", b / 1e6);
  return text;
}

// One line redrawn in place on a terminal; otherwise a line per tenth, for logs.
class progress_printer {
 public:
  explicit progress_printer(bool quiet) : quiet_(quiet), terminal_(isatty(STDERR_FILENO) != 0) {}

  void operator()(const write_progress& p) {
    if (quiet_ || p.bytes_total == 0) return;
    const int percent = static_cast<int>(100.0 * static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total));
    const auto now = std::chrono::steady_clock::now();
    const bool due = terminal_ ? (now - last_ > std::chrono::milliseconds(100) || percent == 100)
                               : (percent / 10 != last_tenth_);
    if (!due) return;
    last_ = now;
    last_tenth_ = percent / 10;
    std::fprintf(stderr, "%sllm-synth: %3d%%  %s of %s  tensor %zu/%zu %.*s%s", terminal_ ? "\r" : "", percent,
                 human_size(p.bytes_done).c_str(), human_size(p.bytes_total).c_str(), p.tensor_index + 1,
                 p.tensor_count, static_cast<int>(p.tensor.size()), p.tensor.data(), terminal_ ? "\033[K" : "\n");
    std::fflush(stderr);
  }
  void finish() const {
    if (!quiet_ && terminal_) std::fputc('\n', stderr);
  }

 private:
  bool quiet_, terminal_;
  std::chrono::steady_clock::time_point last_{};
  int last_tenth_ = -1;
};

void add_options(CLI::App& app, cli_options& o) {
  app.add_option("-o,--output", o.output, "GGUF file to write");
  app.add_option("--arch", o.arch, "architecture: llama, qwen2 or qwen3")->capture_default_str();
  app.add_option("--preset", o.preset, "shape of a published model (see --list-presets)");
  app.add_flag("--list-presets", o.list_presets, "print the presets and exit");
  app.add_option("--type", o.type, "weight type: F32 F16 BF16 Q8_0 Q4_0 Q4_K Q5_K Q6_K Q4_K_M")->capture_default_str();
  app.add_option("--n-embd", o.n_embd, "model width");
  app.add_option("--n-layer", o.n_layer, "number of blocks");
  app.add_option("--n-head", o.n_head, "query heads");
  app.add_option("--n-head-kv", o.n_head_kv, "key/value heads");
  app.add_option("--n-ff", o.n_ff, "feed-forward hidden size");
  app.add_option("--head-dim", o.head_dim, "head size (default n_embd / n_head; Qwen3 sets it)");
  app.add_option("--context-length", o.context_length, "trained context length");
  app.add_option("--rope-theta", o.rope_theta, "RoPE frequency base");
  app.add_option("--rms-eps", o.rms_eps, "RMSNorm epsilon");
  app.add_flag("--untied", o.untied, "write a separate output.weight");
  app.add_flag("--tied", o.tied, "reuse token_embd as the output head (the default; 7B/8B presets are untied)");
  app.add_flag("--qkv-bias", o.qkv_bias, "attention Q/K/V biases (qwen2; on by default there)");
  app.add_flag("--no-qkv-bias", o.no_qkv_bias, "no attention biases for qwen2");
  app.add_flag("--rope-freqs", o.rope_freqs, "llama: write rope_freqs.weight with Llama 3's factors");
  app.add_option("--vocab", o.vocab_path, "copy the tokenizer.* keys of this GGUF (default: built-in byte-level BPE)");
  app.add_option("--vocab-size", o.vocab_size, "pad the vocabulary with unused [PADn] tokens to this size");
  app.add_option("--seed", o.seed, "random seed")->capture_default_str();
  app.add_option("--weight-std", o.weight_std, "standard deviation of matrices and biases (default 0.02)");
  app.add_flag("--random-norms", o.random_norms, "norm weights N(1, norm_std^2) instead of 1");
  app.add_option("--norm-std", o.norm_std, "standard deviation of random norm weights (default 0.1)");
  app.add_option("--name", o.name, "general.name");
  app.add_option("--threads", o.threads, "worker threads (default: all cores)");
  app.add_flag("-q,--quiet", o.quiet, "no progress output");
}

int run(int argc, char** argv) {
  CLI::App app{"llm-synth: write a synthetic (random-weight) GGUF model"};
  cli_options o;
  add_options(app, o);
  app.footer(
      "Without --preset the model is tiny: n_embd 256, 2 layers, 4 heads, 2 KV heads, n_ff 512, context 512,\n"
      "with the family's RoPE theta and RMS epsilon (llama 500000 / 1e-5, qwen 1000000 / 1e-6); qwen3 uses\n"
      "head_dim 128 and qwen2 has QKV biases. The same seed always gives the same weights, in every type.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (o.list_presets) {
    for (const model_preset& p : model_presets())
      std::printf("%-14s %-6s n_embd %5u  n_layer %2u  heads %2u/%u  n_ff %5u  vocab %llu%s\n", std::string(p.name).c_str(),
                  std::string(architecture_name(p.arch)).c_str(), p.dims.n_embd, p.dims.n_layer, p.dims.n_head,
                  p.dims.n_head_kv, p.dims.n_ff, static_cast<unsigned long long>(p.vocab_size),
                  p.tied_output ? "  tied" : "");
    return 0;
  }
  if (o.output.empty()) throw tg::usage_error("llm-synth: --output is required");
  if (o.tied && o.untied) throw tg::usage_error("llm-synth: --tied and --untied contradict each other");
  if (o.qkv_bias && o.no_qkv_bias) throw tg::usage_error("llm-synth: --qkv-bias and --no-qkv-bias contradict each other");

  const model_spec spec = spec_from(o, app);
  const vocabulary vocab = vocabulary_from(o, spec);
  const write_summary planned = plan_summary(spec, vocab);
  if (!o.quiet)
    std::fprintf(stderr, "llm-synth: %s %s, %llu params, %zu tensors, vocab %llu, %s -> %s\n",
                 std::string(architecture_name(spec.arch)).c_str(), std::string(weight_format_name(spec.format)).c_str(),
                 static_cast<unsigned long long>(planned.parameter_count), planned.tensor_count,
                 static_cast<unsigned long long>(vocab.token_count), human_size(planned.file_bytes).c_str(),
                 o.output.c_str());

  progress_printer printer(o.quiet);
  write_options options;
  options.threads = o.threads;
  options.on_progress = [&](const write_progress& p) { printer(p); };
  const auto start = std::chrono::steady_clock::now();
  write_model(spec, vocab, std::filesystem::path(o.output), options);
  printer.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!o.quiet) std::fprintf(stderr, "llm-synth: wrote %s in %.1f s\n", o.output.c_str(), seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
