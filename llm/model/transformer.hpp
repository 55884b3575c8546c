// transformer.hpp: the Llama/Qwen forward pass on a tg::device (norms and RoPE of queries as
// tg:: plans, layer_plans.hpp; matmuls and attention as kernel_builder kernels),
// with a persistent KV cache.
//
//   auto file = tg::gguf::file::open(path);
//   tg::device dev("CPU");
//   tg::model::transformer model(dev, file, {.max_context = 512, .chunk_size = 32});
//   std::vector<float> logits = model.forward(ids, /*start_pos=*/0, tg::model::head::last);
//
// Every kernel takes the chunk length T and start_pos as launch variables (launch_vars.hpp),
// so one compiled set of kernels serves prefill chunks of any length and every decode step.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "llm/model/model_config.hpp"
#include "llm/model/model_weights.hpp"

namespace tg {
class graph;
}
namespace tg::gguf {
class file;
}

namespace tg::model {

// The KV cache's element type; automatic: f32 when the model's attention weights are F32
// (so F32 models keep their exact logits), else f16 (half the bytes read per decode token).
enum class kv_cache_type { automatic, f32, f16 };
const char* kv_cache_type_name(kv_cache_type type);  // "auto", "f32", "f16"

struct transformer_options {
  std::int64_t max_context = 4096;  // KV-cache length; capped at the model's context_length
  std::int64_t chunk_size = 32;     // the most tokens one forward call takes
  int sequences = 1;                // KV caches: independent sequences (a server's slots)
  kv_cache_type cache = kv_cache_type::automatic;
  // Whether decode steps and prefill chunks replay a graph of their launches, captured at the
  // first step of each sequence, token count and head (one submission per step on a GPU), or
  // launch kernel by kernel: automatic uses graphs on devices that do not read host memory (GPUs).
  // On the CPU a graph saves only per-launch lookups, and it measured no faster there
  // (tests/bench/llm_bench prints both), so automatic launches. All-position logits always launch.
  enum class graph_use { automatic, on, off } graphs = graph_use::automatic;
};

// Which positions of a chunk go through the output head.
enum class head { none, last, all };

class transformer {
 public:
  // The file must outlive the transformer: weights are read in place from its mapping.
  transformer(device& dev, const gguf::file& file, transformer_options options = {});
  ~transformer();
  transformer(const transformer&) = delete;
  transformer& operator=(const transformer&) = delete;

  // Runs 1..chunk_size tokens at positions start_pos.. (their K/V go into the cache; earlier
  // positions must already be there). Returns vocab logits for the last token (head::last),
  // T x vocab for every token (head::all), or nothing (head::none). Throws usage_error when
  // the chunk is empty, too long, passes max_context, or holds an id outside the vocabulary.
  // `sequence` picks whose KV cache the chunk extends (0 .. sequences() - 1).
  std::vector<float> forward(std::span<const std::int32_t> tokens, std::int64_t start_pos, head which = head::last,
                             int sequence = 0);

  // One decode step of several sequences in one pass: token i goes to position positions[i]
  // of sequence sequences[i] (distinct sequences, at most chunk_size of them). Returns
  // tokens.size() x vocab logits, row i bit-identical to forward({tokens[i]}, positions[i],
  // head::last, sequences[i]): the matmuls, norms and head take one row per sequence with the
  // one-token kernels, and attention runs per sequence on its own cache. The weights are read
  // once for all rows, which is what makes serving several clients at once cheap.
  std::vector<float> decode_batch(std::span<const std::int32_t> tokens, std::span<const std::int64_t> positions,
                                  std::span<const int> sequences);
  int sequences() const;

  const model_config& config() const { return config_; }
  const model_weights& weights() const { return weights_; }
  std::int64_t max_context() const { return max_context_; }
  std::int64_t chunk_size() const { return chunk_size_; }
  kv_cache_type cache_type() const { return cache_type_; }  // f32 or f16, never automatic
  bool graphs() const { return graphs_; }  // whether decode steps and prefill chunks replay graphs
  // Chunks of a multiple of this many tokens take the prefill matmuls (linear_kernels.hpp).
  std::int64_t token_tile() const;
  // Compiles the matmuls of chunks shorter than chunk_size that are a multiple of token_tile (on
  // GPUs a full chunk's matmuls are others, fixed to its length) and the attention passes of
  // chunk tails, so that after warm_up a prompt's remainder compiles nothing.
  void prepare_partial_chunks();
  // Weight bytes read per token, and KV-cache bytes read at a given context length.
  std::uint64_t weight_bytes_per_token() const { return weights_.bytes_per_token(); }
  std::uint64_t kv_bytes_read(std::int64_t context) const;
  std::uint64_t kv_cache_bytes() const;
  // Tokens that went through forward() since construction (every chunk and decode step).
  std::int64_t tokens_forwarded() const { return tokens_forwarded_; }

  // Times every launch (synchronizing after each) by kernel name, for -v output; the report
  // names what the backend made of each kernel (prepared_kernel::describe: the CPU's ISA form).
  void set_profiling(bool on);  // also clears what was gathered
  bool profiling() const;
  std::string profile_report() const;
  // While profiling: called after each launch (with the host's clock, once its work is done) with
  // the kernel's name and the layer it belongs to (-1: the embedding or the head), for tools that
  // attribute their own per-launch measurements (tests/bench/gpu_step_roofline).
  using launch_observer = std::function<void(const std::string& kernel, int layer)>;
  void set_launch_observer(launch_observer observer);

 private:
  struct state;
  void run_step(head which);  // embedding, layers and (unless none) the head, for s_->vars
  graph capture_step(std::int64_t start_pos, head which);  // run_step(which) as a graph; start_pos its variable
  void run_layer(std::size_t index);
  void run_head();

  device& dev_;
  model_config config_;
  model_weights weights_;
  std::int64_t max_context_ = 0, chunk_size_ = 0;
  kv_cache_type cache_type_ = kv_cache_type::f32;
  bool graphs_ = true;
  std::int64_t tokens_forwarded_ = 0;
  std::unique_ptr<state> s_;
};

}  // namespace tg::model
