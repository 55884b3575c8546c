// attention_kernels.cpp: RoPE, KV-cache writes and the three-pass causal softmax attention.
#include "llm/model/attention_kernels.hpp"

#include <cmath>

#include "llm/model/launch_vars.hpp"

namespace tg::model {
namespace {

constexpr double log2_e = 1.4426950408889634;
constexpr double masked = -1e30;  // exp of (masked - max) is exactly 0, and no inf - inf NaN

kvalue context(kernel_builder& kb) { return kb.variable(var_start_pos) + kb.variable(var_tokens); }

// exp(s[row][c] - m[row]), from scores in slot 1 and row maxima in slot 2.
kvalue shifted_exp(kernel_builder& kb, kvalue row, kvalue ctx, kvalue c) {
  return kb.exp2((kb.load<float>(1, row * ctx + c) - kb.load<float>(2, row)) * log2_e);
}

}  // namespace

ast::kernel rope_kernel(const attention_shape& s, std::int64_t heads, bool to_cache) {
  kernel_builder kb;
  const std::int64_t hd = s.head_dim, half = hd / 2;
  auto h = kb.output_range(heads);
  auto t = kb.output_range(kb.variable(var_tokens));
  auto d = kb.output_range(hd);
  auto pos = kb.variable(var_start_pos) + t;
  // NORM rotates (2i, 2i+1); NEOX rotates (i, i + half). sign: -1 on the pair's first member.
  kvalue i, partner, first;
  if (s.rope == rope_style::norm) {
    i = d / 2;
    partner = d + 1 - (d % 2) * 2;
    first = d % 2 < kb.index(1);
  } else {
    i = d % half;
    partner = (d + half) % hd;
    first = d < kb.index(half);
  }
  auto row = (t * heads + h) * hd;
  auto x = kb.load<float>(1, row + d), xp = kb.load<float>(1, row + partner);
  auto cos = kb.load<float>(2, t * half + i), sin = kb.load<float>(3, t * half + i);  // this chunk's rows
  auto rotated = x * cos + kb.where(first, -xp, xp) * sin;
  kb.store(0, to_cache ? (h * s.max_context + pos) * hd + d : row + d, rotated);
  return kb.finish();
}

ast::kernel cache_store_kernel(const attention_shape& s) {
  kernel_builder kb;
  const std::int64_t hd = s.head_dim;
  auto h = kb.output_range(s.n_kv_head);
  auto t = kb.output_range(kb.variable(var_tokens));
  auto d = kb.output_range(hd);
  auto pos = kb.variable(var_start_pos) + t;
  kb.store(0, (h * s.max_context + pos) * hd + d, kb.load<float>(1, (t * s.n_kv_head + h) * hd + d));
  return kb.finish();
}

// The query heads sharing a KV head are the innermost range, as scalar lanes: each key row
// loads once for all of them. The dot over d runs as vector lanes (8 wide) summed once per
// score. (Heads outermost with d a plain loop read each key row once per query head and
// reached 6.5 GB/s of keys at decode; this shape: see the -v profile.)
ast::kernel scores_kernel(const attention_shape& s) {
  kernel_builder kb;
  const std::int64_t hd = s.head_dim, group = s.n_head / s.n_kv_head, lanes = hd % 8 == 0 ? 8 : 1;
  auto kvh = kb.output_range(s.n_kv_head);
  auto t = kb.output_range(kb.variable(var_tokens));
  auto c = kb.output_range(context(kb));
  auto g = kb.output_range(group);
  auto h = kvh * group + g;
  auto dg = kb.reduce_range(hd / lanes);
  auto dl = kb.reduce_range(lanes);
  auto d = dg * lanes + dl;
  auto q = kb.load<float>(1, (t * s.n_head + h) * hd + d);
  auto k = kb.load<float>(2, (kvh * s.max_context + c) * hd + d);
  auto dot = kb.sum_lanes(kb.sum(q * k, dg), dl) * (1.0 / std::sqrt(double(hd)));
  auto visible = c < kb.variable(var_start_pos) + t + 1;
  auto ctx = context(kb);
  kb.store(0, (h * kb.variable(var_tokens) + t) * ctx + c, kb.where(visible, dot, kb.constant(dtype::float32, masked)));
  ast::kernel kernel = kb.finish();
  kernel.upcast = {1, 1, 1, int(group)};
  kernel.vector_lanes = false;
  return kernel;
}

ast::kernel softmax_max_kernel(const attention_shape& s) {
  kernel_builder kb;
  auto h = kb.output_range(s.n_head);
  auto t = kb.output_range(kb.variable(var_tokens));
  auto ctx = context(kb);
  auto c = kb.reduce_range(ctx);
  auto row = h * kb.variable(var_tokens) + t;
  kb.store(0, row, kb.max(kb.load<float>(1, row * ctx + c), c));
  return kb.finish();
}

ast::kernel softmax_sum_kernel(const attention_shape& s) {
  kernel_builder kb;
  auto h = kb.output_range(s.n_head);
  auto t = kb.output_range(kb.variable(var_tokens));
  auto ctx = context(kb);
  auto c = kb.reduce_range(ctx);
  auto row = h * kb.variable(var_tokens) + t;
  kb.store(0, row, kb.sum(shifted_exp(kb, row, ctx, c), c));
  return kb.finish();
}

ast::kernel softmax_probs_kernel(const attention_shape& s) {
  kernel_builder kb;
  auto h = kb.output_range(s.n_head);
  auto t = kb.output_range(kb.variable(var_tokens));
  auto ctx = context(kb);
  auto c = kb.output_range(ctx);
  auto row = h * kb.variable(var_tokens) + t;
  kb.store(0, row * ctx + c, shifted_exp(kb, row, ctx, c) * kb.unary(ast::op::reciprocal, kb.load<float>(3, row)));
  return kb.finish();
}

// The query heads of a KV head as scalar lanes (each value row loads once for all of them),
// d as the vector. The probabilities come ready (softmax_probs_kernel): computing exp here
// repeated it for every 8 values of d (1B, 1272-token prompt: this kernel took 16% of the
// prefill and 12% of decode at that context).
ast::kernel attend_kernel(const attention_shape& s) {
  kernel_builder kb;
  const std::int64_t hd = s.head_dim, group = s.n_head / s.n_kv_head;
  auto kvh = kb.output_range(s.n_kv_head);
  auto t = kb.output_range(kb.variable(var_tokens));
  auto g = kb.output_range(group);
  auto d = kb.output_range(hd);
  auto h = kvh * group + g;
  auto ctx = context(kb);
  auto c = kb.reduce_range(ctx);
  auto p = kb.load<float>(1, (h * kb.variable(var_tokens) + t) * ctx + c);
  auto v = kb.load<float>(2, (kvh * s.max_context + c) * hd + d);
  kb.store(0, (t * s.n_head + h) * hd + d, kb.sum(p * v, c));
  ast::kernel kernel = kb.finish();
  if (hd % 8 == 0) kernel.upcast = {1, 1, int(group), 8};
  return kernel;
}

}  // namespace tg::model
