// memory_plan.hpp: what opening a model on a GPU will allocate there, part by part, computed from
// the file and the options before anything is allocated, and the check that it fits in what the
// device can still allocate (backend::free_bytes). A model that cannot fit fails at once with
// the numbers, instead of half-way through loading, capture or a decode step (issues 14 and 15:
// the 9B model that filled an 8 GB card).
//
//   tg::model::memory_plan p = tg::model::plan_memory(dev, file, config, options);
//   tg::model::require_fits(p, file.name());  // device_error: per part MiB needed, MiB free, and
//                                              // the largest --max-context that fits
//
// The parts, each laid out as the AM driver lays out allocations (4 KiB pages; 2 MiB physical
// alignment from 2 MiB on: drivers/amd/am_memory.cpp, am_memory::allocate):
//   weights      every tensor transformer.cpp reads, copied in as the file stores it (model_weights.cpp);
//   kv_cache     K and V of every layer for max_context positions, for every sequence;
//   activations  the chunk-sized buffers of transformer::state and the attention scores;
//   kernels      code and kernarg slots of each compiled kernel (am_backend_program.cpp), the
//                graphs' command frames (decode steps and prefill chunks, am_graph.cpp), and the scratch area (am_scratch.hpp),
//                by an estimate with room to spare (kernels are compiled after loading).
// On a device that cannot say what is free (the CPU) the plan is computed and nothing is checked.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "llm/model/model_config.hpp"
#include "llm/model/transformer.hpp"

namespace tg::model {

struct memory_need {
  std::uint64_t weights = 0, kv_cache = 0, activations = 0, kernels = 0;
  std::uint64_t total() const { return weights + kv_cache + activations + kernels; }
};

struct memory_plan {
  memory_need need;
  std::int64_t max_context = 0, chunk_size = 0;  // as the transformer will open them (capped)
  int sequences = 1;
  kv_cache_type cache = kv_cache_type::f32;      // resolved
  std::optional<std::uint64_t> free;             // backend::free_bytes before loading
  // When the plan does not fit but would with a shorter KV cache: the largest max_context that fits.
  std::optional<std::int64_t> fitting_context;
  bool fits() const { return !free || need.total() <= *free; }
};

memory_plan plan_memory(const device& dev, const gguf::file& file, const model_config& config,
                        const transformer_options& options);
// The need at `context` positions (the rest of the plan's options unchanged).
memory_need memory_need_at(const gguf::file& file, const model_config& config, const transformer_options& options,
                           std::int64_t context);

// device_error naming the model, each part in MiB, the free MiB and (when the cache is what does
// not fit) the largest --max-context that would; nothing when it fits or nothing is known.
void require_fits(const memory_plan& plan, const std::string& model_name);
// The same message, for logs and tests.
std::string describe_shortfall(const memory_plan& plan, const std::string& model_name);

}  // namespace tg::model
