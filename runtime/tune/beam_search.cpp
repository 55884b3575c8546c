// beam_search.cpp: the search loop, the output comparison and the progress lines.
#include "runtime/tune/beam_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <tg/core/error.hpp>
#include <tg/device.hpp>
#include <tg/log.hpp>
#include "runtime/tune/opts_text.hpp"

namespace tg::tune {
namespace {

// A candidate must beat the default by this much to replace it: timing noise between runs is a
// few percent, and a different shape that is not really faster is only risk.
constexpr double min_gain = 0.03;
// The default's own run, before its time is known, may take this long.
constexpr auto default_timeout = std::chrono::seconds(60);

struct scored {
  codegen::kernel_opts opts;
  double seconds = 0;
};

std::string ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g ms", seconds * 1e3);
  return text;
}

double element(const std::byte* p, dtype dt) {
  auto read = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (dt) {
    case dtype::float16: return half::to_float(read(std::uint16_t{}));
    case dtype::bfloat16: return bfloat16::to_float(read(std::uint16_t{}));
    case dtype::float32: return read(float{});
    default: return read(double{});
  }
}

void log_skip(const std::string& kernel, const codegen::kernel_opts& c, const std::string& why) {
  if (debug_level() >= 1) log(log_level::debug, "beam: " + kernel + ": " + to_text(c) + " skipped: " + why);
}

}  // namespace

bool outputs_match(std::span<const slot_info> slots, const std::vector<std::vector<std::byte>>& want,
                   const std::vector<std::vector<std::byte>>& got, std::string& why) {
  for (std::size_t k = 0; k < slots.size(); ++k) {
    if (!slots[k].written) continue;
    if (k >= want.size() || k >= got.size() || want[k].size() != got[k].size()) {
      why = str("slot ", k, " has another size");
      return false;
    }
    const dtype dt = slots[k].dt;
    if (!is_float(dt)) {
      if (want[k] != got[k]) {
        why = str("slot ", k, " differs");
        return false;
      }
      continue;
    }
    // Half precision carries 11 bits: a reordered sum moves it by a few of its ulps. The error of
    // a reordered sum scales with its terms, not its result: where terms cancel (a K-quant's
    // d * sum - dmin * mins on stand-in data) a small result moves by a part of the slot's
    // larger ones, so the tolerance is relative to the slot's largest magnitude too.
    const double tolerance = size_bytes(dt) == 2 ? 1e-2 : 1e-3;
    const std::size_t step = std::size_t(size_bytes(dt));
    double largest = 0;
    for (std::size_t i = 0; i + step <= want[k].size(); i += step)
      if (const double w = element(want[k].data() + i, dt); std::isfinite(w)) largest = std::max(largest, std::fabs(w));
    for (std::size_t i = 0; i + step <= want[k].size(); i += step) {
      const double w = element(want[k].data() + i, dt), g = element(got[k].data() + i, dt);
      if (std::isnan(w) && std::isnan(g)) continue;
      const double allowed = tolerance * (1e-1 + std::max({std::fabs(w), std::fabs(g), largest / 8}));
      if (w == g || std::fabs(w - g) <= allowed) continue;
      why = str("slot ", k, " element ", i / step, " is ", g, ", the default gives ", w);
      return false;
    }
  }
  return true;
}

std::optional<beam_result> beam_search(candidate_runner& runner, const kernel_source& source, int slot_count,
                                       std::span<const std::int64_t> vars, const beam_options& options) {
  const std::string& kernel = source.name;
  auto slots = measure_slots(source.nodes, slot_count, vars);
  if (!slots) {
    if (debug_level() >= 1) log(log_level::debug, "beam: " + kernel + ": buffer sizes not known from its indexes; not searched");
    return std::nullopt;
  }
  const std::vector<std::vector<std::byte>> inputs = fill_slots(*slots);
  trial_setup setup{*slots, &inputs, vars, options.timeout.count() > 0 ? options.timeout : default_timeout, options.in_worker};
  const auto start = std::chrono::steady_clock::now();

  // The reference: the kernel as the backend compiles it by itself.
  const codegen::kernel_opts first = runner.normalize(runner.default_opts(source), source);
  trial_result reference;
  try {
    reference = runner.run(*runner.compile(source), first, setup);
  } catch (const std::exception& e) {
    reference.detail = e.what();
  }
  if (reference.outcome != trial_result::status::ok) {
    log_skip(kernel, first, "the default itself failed (" + reference.detail + "); not searched");
    return std::nullopt;
  }
  if (options.timeout.count() == 0)
    setup.timeout = std::chrono::milliseconds(2000 + std::int64_t(reference.seconds * 1e5));

  beam_result result{first, reference.seconds, reference.seconds, true, 1, 0};
  std::vector<scored> good{{first, reference.seconds}};
  std::vector<codegen::kernel_opts> tried{first};
  std::vector<codegen::kernel_opts> beam{first};
  for (int round = 1; round <= options.max_rounds; ++round) {
    std::vector<codegen::kernel_opts> fresh;
    for (const codegen::kernel_opts& b : beam)
      for (codegen::kernel_opts& c : runner.neighbours(b, source))
        if (std::find(tried.begin(), tried.end(), c) == tried.end()) {
          tried.push_back(c);
          fresh.push_back(std::move(c));
        }
    if (fresh.empty()) break;
    const double best_before = good.front().seconds;
    for (const codegen::kernel_opts& c : fresh) {
      trial_result r;
      try {
        r = runner.run(*runner.compile(source_with(source, c)), c, setup);
      } catch (const std::exception& e) {
        r.detail = str("does not compile or run (", e.what(), ")");
      }
      std::string why = r.detail;
      if (r.outcome == trial_result::status::ok && !outputs_match(*slots, reference.outputs, r.outputs, why)) {
        r.outcome = trial_result::status::failed;
        why = "wrong result: " + why;
      }
      if (r.outcome != trial_result::status::ok) {
        ++result.skipped;
        log_skip(kernel, c, why);
        continue;
      }
      ++result.tried;
      good.push_back({c, r.seconds});
    }
    std::stable_sort(good.begin(), good.end(), [](const scored& a, const scored& b) { return a.seconds < b.seconds; });
    beam.clear();
    for (std::size_t i = 0; i < good.size() && int(i) < std::max(options.width, 1); ++i) beam.push_back(good[i].opts);
    log(log_level::info, str("beam: ", kernel, ": round ", round, ", ", result.tried + result.skipped, "/",
                             tried.size(), " candidates, best ", ms(good.front().seconds), " (default ",
                             ms(reference.seconds), ")"));
    if (good.front().seconds >= best_before) break;
  }
  if (good.front().seconds < reference.seconds * (1 - min_gain)) {
    result.best = good.front().opts;
    result.best_seconds = good.front().seconds;
    result.is_default = false;
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log(log_level::info, str("beam: ", kernel, ": ", to_text(result.best), result.is_default ? " (the default) " : " ",
                           ms(result.best_seconds), ", default ",
                           result.is_default ? std::string() : "(" + to_text(first) + ") ", ms(result.default_seconds), "; ",
                           result.tried + result.skipped, " candidates, ", result.skipped, " skipped, in ",
                           int(took * 1e3), " ms"));
  return result;
}

}  // namespace tg::tune
