// model_writer.cpp: GGUF header, tensor infos, then each tensor's data in chunks of rows.
#include "llm/synth/model_writer.hpp"

#include <algorithm>
#include <exception>
#include <fstream>
#include <limits>
#include <thread>
#include <vector>

#include <tg/core/error.hpp>

#include "llm/gguf/gguf_writer.hpp"
#include "llm/synth/model_metadata.hpp"
#include "llm/synth/quantize.hpp"
#include "llm/synth/tensor_plan.hpp"
#include "llm/synth/tensor_values.hpp"

namespace tg::synth {

namespace {

constexpr std::uint64_t alignment = 32;                // GGUF's default; general.alignment is not written
constexpr std::uint64_t elements_per_task = 1u << 20;  // floats one thread generates at a time
constexpr std::uint64_t tensor_count_offset = 8;       // after magic and version (ggml/docs/gguf.md)

std::uint64_t round_up(std::uint64_t n) { return (n + alignment - 1) / alignment * alignment; }

void put_le(std::vector<std::byte>& out, std::uint64_t v, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out.push_back(static_cast<std::byte>(v >> (8 * i)));
}

// The metadata section comes from gguf::writer, which writes a tensor-less file as header plus
// key/value pairs; the tensor count in the header is then patched and the tensor infos appended
// here, because gguf::writer needs every tensor's data in memory up front.
std::vector<std::byte> build_header(const model_spec& spec, const vocabulary& vocab,
                                    const std::vector<planned_tensor>& plan) {
  gguf::writer meta;
  add_model_metadata(meta, spec, vocab);
  std::vector<std::byte> header = meta.to_bytes();
  for (std::size_t i = 0; i < 8; ++i)
    header[tensor_count_offset + i] = static_cast<std::byte>(std::uint64_t{plan.size()} >> (8 * i));
  std::uint64_t offset = 0;
  for (const planned_tensor& t : plan) {
    put_le(header, t.name.size(), 8);
    for (const char c : t.name) header.push_back(static_cast<std::byte>(c));
    put_le(header, t.ne.size(), 4);
    for (const std::uint64_t n : t.ne) put_le(header, n, 8);
    put_le(header, static_cast<std::uint32_t>(t.type), 4);
    put_le(header, offset, 8);
    offset = round_up(offset + t.size_bytes());
  }
  header.resize(round_up(header.size()));
  return header;
}

void check_vocabulary(const vocabulary& vocab) {
  if (vocab.token_count == 0) throw usage_error("synth: the vocabulary has no tokens");
  if (vocab.token_count > std::numeric_limits<std::uint32_t>::max())
    throw usage_error(str("synth: a vocabulary of ", vocab.token_count, " tokens does not fit the uint32 vocab_size"));
}

// Generates and encodes rows [first, first + rows) of `t` into `dst`, on up to `threads` threads.
void encode_rows(const model_spec& spec, const planned_tensor& t, std::uint64_t first, std::uint64_t rows,
                 unsigned threads, std::byte* dst) {
  const std::uint64_t row_length = t.row_length(), row_bytes = gguf::row_size_bytes(t.type, row_length);
  const std::uint64_t rows_per_task = std::max<std::uint64_t>(1, elements_per_task / row_length);
  const std::uint64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  auto run_task = [&](std::uint64_t task) {
    const std::uint64_t begin = task * rows_per_task, n = std::min(rows_per_task, rows - begin);
    std::vector<float> values(n * row_length);
    fill_rows(spec, t, first + begin, n, values.data());
    for (std::uint64_t r = 0; r < n; ++r)
      quantize_row(t.type, values.data() + r * row_length, dst + (begin + r) * row_bytes, row_length);
  };
  if (tasks <= 1 || threads <= 1) {
    for (std::uint64_t task = 0; task < tasks; ++task) run_task(task);
    return;
  }
  // Each worker takes every `threads`-th task; errors are carried back to this thread.
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < threads; ++w) {
    workers.emplace_back([&, w] {
      try {
        for (std::uint64_t task = w; task < tasks; task += threads) run_task(task);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    });
  }
  for (auto& worker : workers) worker.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

void write_bytes(std::ostream& out, const std::byte* data, std::uint64_t n) {
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n));
  if (!out) throw usage_error(str("synth: writing ", n, " bytes of the model failed (disk full?)"));
}

}  // namespace

write_summary plan_summary(const model_spec& spec, const vocabulary& vocab) {
  check_vocabulary(vocab);
  const std::vector<planned_tensor> plan = plan_tensors(spec, vocab.token_count);
  write_summary s;
  s.tensor_count = plan.size();
  s.file_bytes = build_header(spec, vocab, plan).size();
  for (const planned_tensor& t : plan) {
    s.file_bytes += round_up(t.size_bytes());
    s.parameter_count += t.row_length() * t.row_count();
  }
  return s;
}

write_summary write_model(const model_spec& spec, const vocabulary& vocab, std::ostream& out,
                          const write_options& options) {
  check_vocabulary(vocab);
  const std::vector<planned_tensor> plan = plan_tensors(spec, vocab.token_count);
  const unsigned threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  const std::vector<std::byte> header = build_header(spec, vocab, plan);
  write_bytes(out, header.data(), header.size());

  write_summary summary{header.size(), plan.size(), 0};
  write_progress progress{{}, 0, plan.size(), 0, 0};
  for (const planned_tensor& t : plan) progress.bytes_total += t.size_bytes();

  std::vector<std::byte> chunk;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const planned_tensor& t = plan[i];
    const std::uint64_t row_bytes = gguf::row_size_bytes(t.type, t.row_length());
    const std::uint64_t chunk_rows =
        std::max<std::uint64_t>(1, elements_per_task / t.row_length()) * threads;
    progress.tensor = t.name;
    progress.tensor_index = i;
    for (std::uint64_t row = 0; row < t.row_count(); row += chunk_rows) {
      const std::uint64_t rows = std::min(chunk_rows, t.row_count() - row);
      chunk.resize(rows * row_bytes);
      encode_rows(spec, t, row, rows, threads, chunk.data());
      write_bytes(out, chunk.data(), chunk.size());
      progress.bytes_done += chunk.size();
      if (options.on_progress) options.on_progress(progress);
    }
    const std::vector<std::byte> padding(round_up(t.size_bytes()) - t.size_bytes());
    write_bytes(out, padding.data(), padding.size());
    summary.file_bytes += t.size_bytes() + padding.size();
    summary.parameter_count += t.row_length() * t.row_count();
  }
  out.flush();
  if (!out) throw usage_error("synth: flushing the model failed (disk full?)");
  return summary;
}

write_summary write_model(const model_spec& spec, const vocabulary& vocab, const std::filesystem::path& path,
                          const write_options& options) {
  std::filesystem::path partial = path;
  partial += ".partial";
  write_summary summary;
  try {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out) throw usage_error(str("synth: cannot create ", partial.string()));
    summary = write_model(spec, vocab, out, options);
    out.close();
    if (!out) throw usage_error(str("synth: closing ", partial.string(), " failed (disk full?)"));
    std::filesystem::rename(partial, path);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw;
  }
  return summary;
}

}  // namespace tg::synth
