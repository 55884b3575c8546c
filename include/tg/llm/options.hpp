// options.hpp: how a model is opened: the device, its threads, the context and chunk sizes,
// the KV cache's element type.
// Messages (loading, warm-up, kernel times) go to tg::log; see <tg/log.hpp>.
#pragma once
#include <cstdint>
#include <string>

namespace tg::llm {

// The KV cache's element type. automatic: f32 for a model whose weights are F32 (its logits
// then match a float reference closely), f16 otherwise (half the bytes attention reads per
// token, as llama.cpp's default cache type).
enum class cache_type { automatic, f32, f16 };

struct model_options {
  std::string device = "CPU";       // a tg::device name: "CPU", "AMD", "AMD:EMU", ...
  int threads = 0;                  // CPU worker threads; 0: $TG_THREADS, else one per hardware thread
  std::int64_t max_context = 4096;  // KV-cache length in tokens; capped at the model's own context
  std::int64_t chunk_size = 32;     // the most prompt tokens one forward pass takes
  int sequences = 1;                // independent KV caches (a server's parallel slots), each max_context long
  cache_type cache = cache_type::automatic;
  // Compile and run every kernel once before open() returns, so the first request is not slow;
  // this also captures the decode step's graph.
  bool warm_up = true;
  // On a GPU each decode step replays a graph of its launches, captured at the first (one
  // submission per token); false launches kernel by kernel (for comparison and debugging). The
  // CPU launches kernel by kernel either way (a graph measured no faster there).
  bool graphs = true;
};

}  // namespace tg::llm
