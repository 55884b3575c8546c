// gpu_step_roofline.cpp: one whole decode step of the LLM (every kernel of a token: the embedding,
// each layer's norms, roundings, matmuls, RoPE and attention, the head) on the emulated gfx1100
// and gfx1201, modeled on an RX 7900 XTX and an RX 9070 XT (drivers/emu/shader/modeled_cost.hpp), for the
// synthetic Llama-3.2-1B- and Llama-3.1-8B-shaped models in Q8_0 and Q4_K_M. Per kernel and for
// the token: modeled time, DRAM bytes and share of the card's bandwidth, and the dispatches.
//
// The interpreter runs a two-layer model of each shape (its layer 0 a plain layer, its layer 1
// one of Q4_K_M's "more bits" layers, Q6_K in attn_v and ffn_down; alike in Q8_0) with a 4096-row
// vocabulary, at context 16 (TG_STEP_CONTEXT). The token is then the embedding and head's kernels once, each
// layer's kernels times the real model's count of such layers (half of each in Q4_K_M, as
// llama.cpp's type mix has it), and the head matmul scaled by real rows / 4096 (its cost is
// linear in the rows at these sizes). A MODEL, not a measurement: see print_preamble.
//
//   build/tests/bench/gpu_step_roofline            1B shapes
//   TG_STEP_SHAPES=all build/tests/bench/gpu_step_roofline   the 8B ones too (minutes to interpret);
//       TG_STEP_SHAPES=8b the 8B ones alone; TG_STEP_FORMAT=q8_0 or q4_k_m one format only
//   TG_BEAM=2 TG_CACHE=/tmp/t.db build/tests/bench/gpu_step_roofline   each kernel BEAM-searched
//       (by the same model) before it counts; a second run with that TG_CACHE reads the cache
//   TG_STEP_CONTEXT=4096 build/tests/bench/gpu_step_roofline   a decode step at position 4096
//   TG_STEP_TOKENS=32 build/tests/bench/gpu_step_roofline   a prompt's first chunk of 32 tokens
//       (the prefill kernels) instead of a decode step; its rate is the chunk's tokens per second;
//       with TG_STEP_CONTEXT=4096 the chunk at that position (a long prompt's, its cache before it)
#include <tg/device.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "llm/gguf/gguf_file.hpp"
#include "llm/model/transformer.hpp"
#include "llm/synth/model_presets.hpp"
#include "llm/synth/model_writer.hpp"
#include "llm/synth/type_mix.hpp"
#include "llm/synth/vocabulary.hpp"
#include "tests/bench/gpu_roofline_rig.hpp"

namespace {

namespace fs = std::filesystem;
using tg::bench::roofline_gpu;

constexpr std::uint32_t modeled_vocab = 4096;
constexpr std::int64_t prompt_tokens = 16;  // one prefill chunk before the decode step

// The two-layer stand-in of `preset` in `format`, written once into `dir`.
fs::path two_layer_model(const fs::path& dir, const tg::synth::model_preset& preset, tg::synth::weight_format format) {
  const fs::path path =
      dir / ("roofline-" + std::string(preset.name) + "-2layer-" + std::string(tg::synth::weight_format_name(format)) + ".gguf");
  if (fs::exists(path)) return path;
  tg::synth::model_spec spec = tg::synth::spec_from_preset(preset);
  spec.dims.n_layer = 2;
  spec.format = format;
  tg::synth::vocabulary vocab = tg::synth::byte_level_vocabulary(spec.arch);
  tg::synth::pad_vocabulary(vocab, modeled_vocab);
  fs::create_directories(dir);
  tg::synth::write_model(spec, vocab, path);
  return path;
}

// One kernel's share of the token.
struct kernel_cost {
  double seconds = 0, bytes = 0, dispatches = 0;
  double memory = 0, issue = 0, latency = 0;  // the model's terms, summed like seconds
  const char* bound() const {
    if (latency > memory && latency > issue) return "latency";
    return memory >= issue ? "memory" : "issue";
  }
};

}  // namespace

int main(int argc, char** argv) {
  const char* which = std::getenv("TG_STEP_SHAPES");
  const std::string shapes = which != nullptr ? which : "1b";
  const char* format_env = std::getenv("TG_STEP_FORMAT");
  const std::string only_format = format_env != nullptr ? format_env : "";
  const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::path("models");
  // 1: a decode step at position `context`; more: a prompt's first chunk of that many tokens.
  const char* tokens_env = std::getenv("TG_STEP_TOKENS");
  const std::int64_t step_tokens = tokens_env != nullptr ? std::max(1L, std::atol(tokens_env)) : 1;
  const bool prefill = step_tokens > 1;
  // The decode step's position (TG_STEP_CONTEXT, default 16): past the prompt's 16 tokens the cache
  // holds zeros, which attention reads as it would real keys and values.
  const char* context_env = std::getenv("TG_STEP_CONTEXT");
  const std::int64_t context = context_env != nullptr ? std::max(prompt_tokens, std::atol(context_env)) : prompt_tokens;
  // Where the step starts: decode at `context`; a prefill chunk at 0, or with TG_STEP_CONTEXT at
  // that position (a long prompt's later chunk, attending to the cache before it).
  const std::int64_t start = prefill && context_env == nullptr ? 0 : context;
  tg::bench::print_preamble(prefill ? "one whole prefill chunk of the LLM, every kernel."
                                    : "one whole decode step of the LLM, every kernel.");
  if (prefill) std::printf("prefill: a prompt's chunk of %lld tokens at position %lld\n\n", (long long)step_tokens, (long long)start);
  std::vector<const char*> presets;
  if (shapes != "8b") presets.push_back("llama3.2-1b");
  if (shapes == "all" || shapes == "8b") presets.push_back("llama3.1-8b");
  std::vector<std::string> summary;
  for (const char* name : presets) {
    const tg::synth::model_preset& preset = *tg::synth::find_preset(name);
    for (tg::synth::weight_format format : {tg::synth::weight_format::q8_0, tg::synth::weight_format::q4_k_m}) {
      const char* format_name = format == tg::synth::weight_format::q8_0 ? "q8_0" : "q4_k_m";
      if (!only_format.empty() && only_format != format_name) continue;
      const fs::path path = two_layer_model(dir, preset, format);
      auto file = tg::gguf::file::open(path);
      // Of the real model's layers, how many are like layer 1 of the stand-in (more bits).
      std::uint32_t more = 0;
      for (std::uint32_t l = 0; l < preset.dims.n_layer; ++l) more += tg::synth::uses_more_bits(l, preset.dims.n_layer);
      const double layer_weight[2] = {double(preset.dims.n_layer - more), double(more)};
      const std::string head_prefix = "r_" + std::to_string(modeled_vocab) + "_";
      const double head_scale = double(preset.vocab_size) / modeled_vocab;
      // 2 GiB of emulated VRAM: the 8B stand-in's two layers and head take 493 MiB in Q8_0, more
      // than the default 512 MiB card has free.
      for (const auto& [device_name, card] : {std::pair{"AMD:EMU:gfx11:vram=2G", &tg::emu::shader::rx_7900_xtx},
                                               std::pair{"AMD:EMU:gfx1201:vram=2G", &tg::emu::shader::rx_9070_xt}}) {
        roofline_gpu g(device_name, *card);
        // A prefill step is a full chunk (on GPUs, the kernels fixed to its length); decode's prompt one of 16.
        tg::model::transformer m(g.dev, file, {.max_context = start + step_tokens + 8,
                                                .chunk_size = prefill ? step_tokens : prompt_tokens});
        // Under TG_BEAM a kernel is searched at its first launch, with that launch's variables:
        // one step first, so the kernels are tuned for the step counted (for decode, one token at the
        // modeled position; the prompt's chunk then rewrites the cache from position 0).
        std::vector<std::int32_t> step;
        for (std::int64_t i = 0; i < step_tokens; ++i) step.push_back(std::int32_t(400 + i));
        if (const char* beam = std::getenv("TG_BEAM"); beam != nullptr && std::string(beam) != "0")
          (void)m.forward(step, start, tg::model::head::last);
        if (!prefill) {
          std::vector<std::int32_t> prompt;
          for (int i = 0; i < prompt_tokens; ++i) prompt.push_back(300 + int(i));
          (void)m.forward(prompt, 0, tg::model::head::none);  // the cache's first 16 positions
        }
        // One step, each launch's dispatch (if it has one) paired with its kernel and layer.
        std::map<std::string, kernel_cost> costs;
        std::size_t seen = 0;
        // The prompt's dispatches may still be running: done before the step's are counted (they
        // were once counted into the step's first kernel, the embedding, as 54-61 dispatches).
        g.dev.synchronize();
        g.seen.clear();
        m.set_profiling(true);  // the host clock: each launch's work is done when the observer hears of it
        m.set_launch_observer([&](const std::string& kernel, int layer) {
          std::lock_guard lock(g.mutex);
          for (; seen < g.seen.size(); ++seen) {
            const tg::bench::modeled_dispatch md = tg::bench::model(g.card, g.seen[seen]);
            double weight = layer >= 0 ? layer_weight[std::min(layer, 1)] : 1.0;
            if (layer < 0 && kernel.rfind(head_prefix, 0) == 0) weight = head_scale;
            kernel_cost& c = costs[kernel];
            c.seconds += md.total_s * weight;
            c.memory += md.memory_s * weight, c.issue += md.issue_s * weight, c.latency += md.latency_s * weight;
            c.bytes += double(g.seen[seen].global_lines) * tg::bench::line_bytes * weight;
            c.dispatches += weight;
          }
        });
        (void)m.forward(step, start, tg::model::head::last);
        m.set_launch_observer({});
        m.set_profiling(false);
        // The table: kernels by modeled time, then the token.
        std::vector<std::pair<std::string, kernel_cost>> rows(costs.begin(), costs.end());
        std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
        double total = 0, bytes = 0, dispatches = 0;
        for (const auto& [kernel, c] : rows) total += c.seconds, bytes += c.bytes, dispatches += c.dispatches;
        const std::string label = std::string(name) + " " + std::string(tg::synth::weight_format_name(format));
        std::printf("%s on %s (modeled from %s):\n", label.c_str(), card->name, device_name);
        const char* per = prefill ? "chunk" : "token";
        std::printf("  %-44s %8s/%-5s %6s %7s/%-5s %9s %6s %8s\n", "kernel", "us", per, "share", "MB", per, "disp.", "BW",
                    "bound");
        for (const auto& [kernel, c] : rows)
          std::printf("  %-44s %14.1f %5.1f%% %13.2f %9.0f %5.1f%% %8s\n", kernel.c_str(), c.seconds * 1e6,
                      100 * c.seconds / total, c.bytes / 1e6, c.dispatches, 100 * c.bytes / c.seconds / card->bytes_per_second,
                      c.bound());
        char line[300];
        std::snprintf(line, sizeof line,
                      "%-22s %-12s %8.0f us/%s = %7.1f tok/s, %8.1f MB, %5.0f dispatches, %5.1f%% of %.0f GB/s",
                      label.c_str(), card->name, total * 1e6, per, double(step_tokens) / total, bytes / 1e6, dispatches,
                      100 * bytes / total / card->bytes_per_second, card->bytes_per_second / 1e9);
        std::printf("  %s: %s\n\n", per, line);
        summary.push_back(line);
      }
    }
  }
  std::printf("per %s (modeled):\n", prefill ? "chunk" : "token");
  for (const std::string& line : summary) std::printf("%s\n", line.c_str());
  return 0;
}
