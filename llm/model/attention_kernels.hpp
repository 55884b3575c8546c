// attention_kernels.hpp: RoPE, the KV-cache write, and causal attention over the cache as
// separate kernels: scores, row max, exponentials, their row sum, then the weighted sum of V
// divided by that sum. After the scores (which read each key once for every query head of its
// GQA group) the passes run over n_head x context floats, which stay in the core's L2 at
// decode; the values are read once, by the last. A GPU, for which each dispatch costs more than
// recomputing, runs fused forms: RoPE and both cache writes in one kernel, and at decode the
// weighted sum finding the row's max and sum itself (softmax_from).
//
// Layouts: q/k/v activations are [t][head][head_dim] (the matmul output); each layer's
// cache is [kv_head][max_context][head_dim]; scores are [head][t][ctx] with
// ctx = start_pos + T, so every kernel takes T and start_pos as launch variables.
#pragma once
#include <array>
#include <compare>
#include <cstdint>

#include <tg/ast/kernel_builder.hpp>

#include "llm/model/model_config.hpp"

namespace tg::model {

struct attention_shape {
  std::int64_t n_head = 0, n_kv_head = 0, head_dim = 0, max_context = 0;
  rope_style rope = rope_style::norm;
  dtype cache = dtype::float32;  // the KV cache's elements: float32 or float16 (read as float)
  // > 0: kernels for chunks of exactly this many tokens (a full chunk on a GPU: the token count a
  // constant, so the GPU's default opts see how many outputs there are); 0: T, a launch variable.
  std::int64_t tokens = 0;
  // Kernels for contexts past short_attention_context only (a GPU's full chunks there): the weighted
  // sum's walk carries ast::reduce_long_walk, so the GPU's heuristic splits it wider.
  bool long_context = false;
};

// Where token t's heads lie in an activation buffer: floats from row t * stride + offset
// (stride 0: heads x head_dim, the rows packed). Projections stacked in one matmul's rows
// (model_weights.hpp: layer_weights::stacked) take as stride the stacked width, and as offset
// the widths stacked before theirs.
struct head_rows {
  std::int64_t stride = 0, offset = 0;
  auto operator<=>(const head_rows&) const = default;
};

// RoPE at positions start_pos + t of x[t][h][d] (`heads` heads, x's rows as `rows` says). to_cache:
// store into a cache [h][max_context][d] at those positions (keys), else into y[t][h][d] (queries,
// packed). Slots: 0 y or cache, 1 x, 2 cos, 3 sin: the tables' rows of this chunk's positions
// ([t][head_dim / 2]).
ast::kernel rope_kernel(const attention_shape& s, std::int64_t heads, bool to_cache, head_rows rows = {});

// cache[h][start_pos + t][d] = v[t][h][d], v's rows as `rows` says. Slots: 0 cache, 1 v.
ast::kernel cache_store_kernel(const attention_shape& s, head_rows rows = {});

// RoPE of the queries into y and of the keys into the key cache, and the values into the value
// cache (rope_kernel twice and cache_store_kernel) in one kernel: a GPU's, two dispatches fewer a
// layer. q, k and v are read as `rows` says. Slots: 0 y, 1 key cache, 2 value cache, 3 q, 4 k,
// 5 v, 6 cos, 7 sin. A work-item per query head's element, so each key and value is written
// once for every query head of its group: the same value to the same place.
ast::kernel rope_store_kernel(const attention_shape& s, const std::array<head_rows, 3>& rows);

// s[h][t][c] = q[t][h]·K[h / group][c] / sqrt(head_dim), or -1e30 where c > start_pos + t.
// Slots: 0 s, 1 q, 2 key cache.
ast::kernel scores_kernel(const attention_shape& s);

// m[h][t] = max_c s[h][t][c]. Slots: 0 m, 1 s.
ast::kernel softmax_max_kernel(const attention_shape& s);

// p[h][t][c] = exp(s[h][t][c] - m[h][t]). Slots: 0 p, 1 s, 2 m. p may be s, but then the
// loop vectorizer's overlap check sends every row down the scalar loop: give p its own buffer.
ast::kernel softmax_exp_kernel(const attention_shape& s);

// l[h][t] = sum_c p[h][t][c]. Slots: 0 l, 1 p.
ast::kernel softmax_sum_kernel(const attention_shape& s);

// What attend_kernel reads of the softmax: the probabilities (softmax_exp_kernel's) and their
// row sums, or the scores alone, the row's maximum and sum computed in the kernel.
enum class softmax_from { probabilities, scores };

// o[t][h][d] = sum_c p[h][t][c] * V[h / group][c][d] / l[h][t]. Slots: 0 o, 1 p, 2 value
// cache, 3 l. scores: slots 0 o, 1 s, 2 value cache; m and l computed here (one kernel after
// the scores).
ast::kernel attend_kernel(const attention_shape& s, softmax_from from = softmax_from::probabilities);

// A decode step's weighted sum at long contexts, split over the context (flash-decoding's split,
// on probabilities that already hold the whole row's max): the context is cut into `runs` runs
// of ceil(context / runs) positions, and attend_runs_kernel sums each apart, so a walk is a
// runs-th of the context and many more waves share it; attend_join_kernel adds the runs up and
// divides by the row sum.
// part[r][t][h][d] = sum_{c in run r} p[h][t][c] * V[h / group][c][d]. Slots: 0 part, 1 p, 2 value cache.
ast::kernel attend_runs_kernel(const attention_shape& s, std::int64_t runs);
// The runs a GPU's decode step splits it in past short_attention_context (transformer.cpp says why).
constexpr std::int64_t attention_runs = 8;
// o[t][h][d] = sum_r part[r][t][h][d] / l[h][t]. Slots: 0 o, 1 part, 2 l.
ast::kernel attend_join_kernel(const attention_shape& s, std::int64_t runs);

}  // namespace tg::model
