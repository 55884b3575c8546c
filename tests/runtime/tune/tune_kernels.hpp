// tune_kernels.hpp: the kernels and helpers the tuning tests share: a matmul built by hand, its
// reference result, and a log sink that keeps what tg says.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>
#include <tg/device.hpp>
#include <tg/log.hpp>
#include "runtime/tune/beam_search.hpp"

namespace tune_test {

// out[m, n] = sum_k a[m, k] * b[k, n]: slots 0 out, 1 a, 2 b.
inline tg::ast::kernel matmul(std::int64_t m, std::int64_t n, std::int64_t k) {
  tg::kernel_builder kb;
  auto i = kb.output_range(m);
  auto j = kb.output_range(n);
  auto r = kb.reduce_range(k);
  kb.store(0, i * n + j, kb.sum(kb.load<float>(1, i * k + r) * kb.load<float>(2, r * n + j), r));
  return kb.finish();
}

// Small integers over 8: products and sums of them are exact in float, in any order.
inline std::vector<float> pattern(std::size_t count, int seed) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = float(int((i * 7 + std::size_t(seed) * 13) % 17) - 8) / 8.0f;
  return v;
}

inline std::vector<float> reference_matmul(const std::vector<float>& a, const std::vector<float>& b, std::int64_t m,
                                           std::int64_t n, std::int64_t k) {
  std::vector<float> out(std::size_t(m * n), 0.0f);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (std::int64_t r = 0; r < k; ++r) s += a[std::size_t(i * k + r)] * b[std::size_t(r * n + j)];
      out[std::size_t(i * n + j)] = s;
    }
  return out;
}

// Runs the matmul through `dev` (the tuning hook included) and returns its output.
inline std::vector<float> run_matmul(tg::device& dev, const tg::ast::kernel& kernel, std::int64_t m, std::int64_t n,
                                     std::int64_t k) {
  auto a = pattern(std::size_t(m * k), 1), b = pattern(std::size_t(k * n), 2);
  tg::buffer out = dev.allocate(std::size_t(m * n) * 4), ab = dev.allocate(a.size() * 4), bb = dev.allocate(b.size() * 4);
  ab.copy_in(a.data(), a.size() * 4);
  bb.copy_in(b.data(), b.size() * 4);
  dev.launch(kernel, std::vector<tg::buffer>{out, ab, bb});
  std::vector<float> got(std::size_t(m * n));
  out.copy_out(got.data(), got.size() * 4);
  return got;
}

// Keeps every line logged while it lives.
struct log_capture {
  std::mutex lock;
  std::vector<std::string> lines;
  log_capture() {
    tg::set_log_callback([this](tg::log_level, std::string_view line) {
      std::lock_guard guard(lock);
      lines.emplace_back(line);
    });
  }
  ~log_capture() { tg::set_log_callback({}); }
  int count(const std::string& part) {
    std::lock_guard guard(lock);
    int n = 0;
    for (const std::string& l : lines) n += l.find(part) != std::string::npos;
    return n;
  }
};

// BEAM at TG_DEBUG=1, so each skipped candidate is logged with its reason (into a log_capture
// made before).
inline std::optional<tg::tune::beam_result> search_logging_skips(tg::tune::candidate_runner& runner,
                                                                 const tg::kernel_source& source, int slot_count,
                                                                 const tg::tune::beam_options& options) {
  tg::set_debug(1);
  auto found = tg::tune::beam_search(runner, source, slot_count, {}, options);
  tg::set_debug(0);
  return found;
}

}  // namespace tune_test
