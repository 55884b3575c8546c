// synth_test_util.hpp: writing synthetic models to memory and reading them back, for tests.
#pragma once
#include <cmath>
#include <cstddef>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "llm/gguf/dequant_reference.hpp"
#include "llm/gguf/gguf_file.hpp"
#include "llm/synth/model_writer.hpp"

namespace tg::synth::test {

// A written model and the reader over it; the bytes must outlive the file, so both are kept.
struct written_model {
  written_model(std::vector<std::byte> b, const std::string& name)
      : bytes(std::move(b)), file(gguf::file::from_memory(bytes, name)) {}
  std::vector<std::byte> bytes;
  gguf::file file;  // declared after `bytes`, which it reads
};

inline std::vector<std::byte> write_bytes(const model_spec& spec, const vocabulary& vocab, unsigned threads = 1) {
  std::ostringstream out;
  write_options options;
  options.threads = threads;
  write_model(spec, vocab, out, options);
  const std::string s = out.str();
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

// Returned by pointer so the file's views into `bytes` stay valid.
inline std::unique_ptr<written_model> write_and_open(const model_spec& spec, const vocabulary& vocab,
                                                     unsigned threads = 1) {
  return std::make_unique<written_model>(write_bytes(spec, vocab, threads), spec.name);
}

// A tensor's values, dequantized.
inline std::vector<float> dequantized(const gguf::file& f, std::string_view name) {
  const gguf::tensor_info& t = f.get_tensor(name);
  std::vector<float> out(t.element_count());
  const std::uint64_t row_bytes = t.row_size_bytes();
  for (std::uint64_t r = 0; r < t.row_count(); ++r)
    gguf::dequantize_row(t.type, f.tensor_data(t) + r * row_bytes, out.data() + r * t.ne[0], t.ne[0]);
  return out;
}

// sqrt(sum (a - b)^2 / sum b^2): the error of `a` relative to the signal `b`.
inline double relative_rms_error(std::span<const float> a, std::span<const float> b) {
  double err = 0.0, ref = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    err += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    ref += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(err / ref);
}

}  // namespace tg::synth::test
