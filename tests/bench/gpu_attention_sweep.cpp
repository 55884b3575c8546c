// gpu_attention_sweep: attention's weighted sum of V on the emulated gfx1100, modeled as an RX
// 7900 XTX (drivers/emu/shader/modeled_cost.hpp), for the 8B's heads of 128 and the 1B's of 64
// (32 query heads, 8 KV heads, f16 cache). Not a test: a few minutes. Two tables:
//   1. A decode step's attention after the scores at contexts 512 to 8192, in each form
//      transformer.cpp chooses between: one kernel from the scores, and the passes with the
//      weighted sum in attention_runs runs joined after (attend_runs_kernel).
//   2. The schedules of the weighted sums that walk the context (a full chunk's of 32 tokens, and
//      the runs'): the default (runtime/opt/gpu_heuristic.cpp: split_tiled_walk) against 4 x 4
//      tiles with other groups and unrolls, at contexts 64 to 4096, and for the chunk the default
//      of its kernel hinted long (attention_shape::long_context, taken past context 1024).
//
//   gpu_attention_sweep [head_dim ...]      (default: 128 64)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "llm/model/attention_kernels.hpp"
#include "tests/bench/gpu_roofline_rig.hpp"

namespace {

using namespace tg;
using model::attention_shape;
using model::softmax_from;

constexpr std::int64_t heads = 32, kv_heads = 8, chunk = 32, longest = 8192;

struct rig {
  bench::roofline_gpu gpu{"AMD:EMU:gfx11", bench::rx_7900_xtx};
  std::int64_t hd;
  attention_shape shape;
  buffer scores, probs, keys, values, queries, out, row_max, row_sum, parts;

  explicit rig(std::int64_t head_dim)
      : hd(head_dim), shape{heads, kv_heads, head_dim, longest + chunk, model::rope_style::norm, dtype::float16} {
    const std::int64_t rows = heads * chunk, cache = kv_heads * shape.max_context * hd;
    scores = filled(rows * shape.max_context);
    probs = filled(rows * shape.max_context);
    keys = filled(cache);
    values = filled(cache);
    queries = filled(chunk * heads * hd);
    out = filled(chunk * heads * hd);
    row_max = filled(rows);
    row_sum = filled(rows);
    parts = filled(model::attention_runs * chunk * heads * hd);
  }
  // Values do not change the modeled cost (every line is read once whatever it holds), but the
  // exponentials must stay finite: 0.5 everywhere.
  buffer filled(std::int64_t floats) {
    buffer b = gpu.dev.allocate(std::size_t(floats) * 4);
    std::vector<float> v(std::size_t(floats), 0.5f);
    b.copy_in(v.data(), v.size() * 4);
    return b;
  }
  // The modeled microseconds of one launch of `source` (the backend's own default when it
  // carries no schedule); prints its row under `label`.
  double launch(const std::string& label, const kernel_source& source, bool scheduled, const std::vector<buffer>& slots,
                std::vector<std::int64_t> vars) {
    std::vector<void*> ptrs;
    for (const buffer& b : slots) ptrs.push_back(b.data());
    auto program = scheduled ? gpu.dev.impl().compile(source) : gpu.dev.compile(source);
    gpu.seen.clear();
    program->launch(ptrs, vars);
    gpu.dev.synchronize();
    return bench::print_dispatches(label.c_str(), gpu) * 1e6;
  }
  double launch(const std::string& label, const ast::kernel& k, const std::vector<buffer>& slots, std::vector<std::int64_t> vars) {
    return launch(label, kernel_source{k.nodes, k.global_ranges, label, k.upcast, k.vector_lanes}, false, slots, std::move(vars));
  }
};

void decode_forms(rig& r) {
  const attention_shape& s = r.shape;
  std::vector<std::string> lines;
  for (std::int64_t ctx : {512, 1024, 1536, 2048, 4096, 8192}) {
    const std::vector<std::int64_t> vars{1, ctx - 1, 1, 0};
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, "_%lld", (long long)ctx);
    const std::string at = suffix;
    r.launch("scores" + at, model::scores_kernel(s), {r.scores, r.queries, r.keys}, vars);
    const double one = r.launch("one_kernel" + at, model::attend_kernel(s, softmax_from::scores), {r.out, r.scores, r.values}, vars);
    const double max = r.launch("max" + at, model::softmax_max_kernel(s), {r.row_max, r.scores}, vars);
    const double runs = max + r.launch("exp" + at, model::softmax_exp_kernel(s), {r.probs, r.scores, r.row_max}, vars) +
                        r.launch("sum" + at, model::softmax_sum_kernel(s), {r.row_sum, r.probs}, vars) +
                        r.launch("runs" + at, model::attend_runs_kernel(s, model::attention_runs), {r.parts, r.probs, r.values}, vars) +
                        r.launch("join" + at, model::attend_join_kernel(s, model::attention_runs), {r.out, r.parts, r.row_sum}, vars);
    char line[200];
    std::snprintf(line, sizeof line, "  %5lld  %10.1f  %10.1f", (long long)ctx, one, runs);
    lines.push_back(line);
  }
  std::printf("\nhead_dim %lld, a decode step's attention after the scores, modeled us a layer:\n"
              "context  one kernel  in %lld runs\n",
              (long long)r.hd, (long long)model::attention_runs);
  for (const std::string& l : lines) std::printf("%s\n", l.c_str());
}

void walk_schedules(rig& r) {
  attention_shape full = r.shape;
  full.tokens = chunk;
  const ast::kernel chunk_sum = model::attend_kernel(full, softmax_from::probabilities);
  attention_shape long_full = full;  // the chunk's kernel past short_attention_context, hinted long
  long_full.long_context = true;
  const ast::kernel long_chunk_sum = model::attend_kernel(long_full, softmax_from::probabilities);
  const ast::kernel runs = model::attend_runs_kernel(r.shape, model::attention_runs);
  const std::vector<std::pair<int, int>> schedules{{0, 0}, {8, 1}, {16, 1}, {16, 2}, {16, 4}, {32, 1}, {32, 2}, {32, 4}};
  std::vector<std::string> lines;
  for (std::int64_t ctx : {64, 256, 1024, 4096})
    for (int which = 0; which < 2; ++which) {
      const ast::kernel& k = which == 0 ? chunk_sum : runs;
      std::string line = std::string(which == 0 ? "chunk" : "runs ") + " " + std::to_string(ctx);
      line.resize(12, ' ');
      for (auto [group, unroll] : schedules) {
        kernel_source source{k.nodes, k.global_ranges, "walk", k.upcast, k.vector_lanes};
        if (group > 0) {  // a 4 x 4 tile of (query heads of a group, d), the last two ranges
          source.group_lanes = group;
          source.reduce_unroll = unroll;
          source.upcast.assign(std::size_t(k.global_ranges), 1);
          source.upcast[std::size_t(k.global_ranges - 2)] = 4;
          source.upcast[std::size_t(k.global_ranges - 1)] = 4;
          source.vector_lanes = false;
        }
        const std::vector<buffer> slots = which == 0 ? std::vector<buffer>{r.out, r.probs, r.values, r.row_sum}
                                                     : std::vector<buffer>{r.parts, r.probs, r.values};
        const std::vector<std::int64_t> vars = which == 0 ? std::vector<std::int64_t>{chunk, ctx - chunk, 1, 0}
                                                          : std::vector<std::int64_t>{1, ctx - 1, 1, 0};
        char cell[16];
        std::snprintf(cell, sizeof cell, " %8.1f", r.launch("walk", source, group > 0, slots, vars));
        line += cell;
      }
      if (which == 0) {  // the default schedule of the kernel hinted long
        const std::vector<std::int64_t> vars{chunk, ctx - chunk, 1, 0};
        char cell[16];
        std::snprintf(cell, sizeof cell, " %8.1f", r.launch("walk_long", long_chunk_sum, {r.out, r.probs, r.values, r.row_sum}, vars));
        line += cell;
      }
      lines.push_back(line);
    }
  std::printf("\nhead_dim %lld, weighted sums walking the context, modeled us (4 x 4 tiles, group g, unroll u):\n"
              "what ctx      default    g8 u1   g16 u1   g16 u2   g16 u4   g32 u1   g32 u2   g32 u4  hinted long\n",
              (long long)r.hd);
  for (const std::string& l : lines) std::printf("%s\n", l.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::int64_t> dims;
  for (int i = 1; i < argc; ++i) dims.push_back(std::atoll(argv[i]));
  if (dims.empty()) dims = {128, 64};
  for (std::int64_t hd : dims) {
    if (hd <= 0 || hd % 4 != 0) {
      std::fprintf(stderr, "gpu_attention_sweep: head_dim %lld is not a positive multiple of 4\n", (long long)hd);
      return 2;
    }
    rig r(hd);
    bench::print_header();
    decode_forms(r);
    walk_schedules(r);
  }
  return 0;
}
