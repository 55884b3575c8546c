// model_writer.hpp: writes a synthetic model as a GGUF v3 file, streaming tensor by tensor.
//
// Only one chunk of rows is in memory at a time, so an 8B-parameter model needs no more memory
// than a small one. Rows are generated and quantized on several threads; the bytes do not
// depend on the thread count.
//
//   tg::synth::model_spec spec = tg::synth::default_spec(tg::synth::architecture::llama);
//   tg::synth::vocabulary vocab = tg::synth::byte_level_vocabulary(spec.arch);
//   tg::synth::write_model(spec, vocab, "tiny.gguf");
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

#include "llm/synth/model_spec.hpp"
#include "llm/synth/vocabulary.hpp"

namespace tg::synth {

struct write_progress {
  std::string_view tensor;       // the tensor being written
  std::size_t tensor_index = 0;  // 0-based, of tensor_count
  std::size_t tensor_count = 0;
  std::uint64_t bytes_done = 0;  // tensor data written so far, of bytes_total
  std::uint64_t bytes_total = 0;
};

struct write_options {
  unsigned threads = 0;  // 0: std::thread::hardware_concurrency()
  // Called on the calling thread after each chunk of rows is written.
  std::function<void(const write_progress&)> on_progress;
};

struct write_summary {
  std::uint64_t file_bytes = 0;
  std::size_t tensor_count = 0;
  std::uint64_t parameter_count = 0;  // elements of all tensors
};

// The size and tensor count write_model will produce, without generating anything.
write_summary plan_summary(const model_spec& spec, const vocabulary& vocab);

// Writes to `out`. Throws usage_error for an invalid spec or vocabulary, or a failed write.
write_summary write_model(const model_spec& spec, const vocabulary& vocab, std::ostream& out,
                          const write_options& options = {});

// Writes `path` through a temporary file next to it, renamed into place when complete, so an
// interrupted run leaves no truncated model behind.
write_summary write_model(const model_spec& spec, const vocabulary& vocab, const std::filesystem::path& path,
                          const write_options& options = {});

}  // namespace tg::synth
