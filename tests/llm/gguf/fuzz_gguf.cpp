// fuzz_gguf.cpp: the libFuzzer entry point over the GGUF reader and reference dequantizer.
//
// Built two ways: by scripts/fuzz-gguf.sh with clang's -fsanitize=fuzzer (libFuzzer supplies
// main), and into fuzz_gguf_driver for CI, which calls this function on mutated seeds.
// Any exception other than tg::usage_error, and any sanitizer report, is a bug.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <tg/core/error.hpp>

#include "llm/gguf/dequant_reference.hpp"
#include "llm/gguf/gguf_file.hpp"

namespace {

using tg::gguf::file;

// Getters throw usage_error when the stored type does not fit; that is expected here.
template <class F>
void ignoring_usage_errors(F&& f) {
  try {
    f();
  } catch (const tg::usage_error&) {
  }
}

volatile std::uint64_t sink;  // keeps the reads below from being optimized away

void walk(const tg::gguf::value& v) {
  sink = sink + tg::gguf::describe(v).size();
  if (!v.is_array()) return;
  for (std::uint64_t i = 0; i < v.size(); ++i) {
    const tg::gguf::value e = v.element(i);
    if (e.is_array()) walk(e);
    if (auto s = e.to_string()) sink = sink + (s->empty() ? 0 : static_cast<unsigned char>(s->back()));
    if (auto d = e.to_f64()) sink = sink + (*d > 0);
  }
}

void exercise(const file& f) {
  for (const auto& entry : f.metadata()) {
    walk(entry.val);
    const auto key = entry.key;
    ignoring_usage_errors([&] { sink = sink + f.get_u32(key); });
    ignoring_usage_errors([&] { sink = sink + static_cast<std::uint64_t>(f.get_i64(key)); });
    ignoring_usage_errors([&] { sink = sink + (f.get_f32(key) > 0); });
    ignoring_usage_errors([&] { sink = sink + f.get_string(key).size(); });
    ignoring_usage_errors([&] { sink = sink + f.get_bool(key); });
    ignoring_usage_errors([&] { sink = sink + f.get_string_array(key).size(); });
    ignoring_usage_errors([&] { sink = sink + f.get_f32_array(key).size(); });
    ignoring_usage_errors([&] { sink = sink + f.get_i32_array(key).size(); });
  }
  for (const auto& t : f.tensors()) {
    if (f.find_tensor(t.name) != &t) __builtin_trap();
    const std::span<const std::byte> bytes = f.tensor_bytes(t);
    if (!bytes.empty()) sink = sink + std::to_integer<unsigned>(bytes.front()) + std::to_integer<unsigned>(bytes.back());
    // Decode the first row of small tensors, as a loader would.
    if (tg::gguf::is_dequantizable(t.type) && t.ne[0] <= 4096 && t.row_count() > 0) {
      std::vector<float> row(t.ne[0]);
      tg::gguf::dequantize_row(t.type, bytes.data(), row.data(), row.size());
      sink = sink + (row.empty() ? 0 : row.back() > 0);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const file f = file::from_memory({reinterpret_cast<const std::byte*>(data), size}, "fuzz.gguf");
    exercise(f);
  } catch (const tg::usage_error&) {
  }
  return 0;
}
