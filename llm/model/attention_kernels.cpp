// attention_kernels.cpp: RoPE, KV-cache writes and the causal softmax attention in passes.
#include "llm/model/attention_kernels.hpp"

#include <cmath>

#include "llm/model/launch_vars.hpp"

namespace tg::model {
namespace {

constexpr double log2_e = 1.4426950408889634;
constexpr double masked = -1e30;  // exp of (masked - max) is exactly 0, and no inf - inf NaN

// The chunk's token count: a constant where the shape fixes it (attention_shape::tokens), else T.
kvalue chunk_tokens(kernel_builder& kb, const attention_shape& s) {
  return s.tokens > 0 ? kb.index(s.tokens) : kb.variable(var_tokens);
}
kvalue context(kernel_builder& kb, const attention_shape& s) { return kb.variable(var_start_pos) + chunk_tokens(kb, s); }

// Software prefetch of the cache stream, as the matmuls do for weights (linear_kernels.cpp,
// prefetch_distance): `value` once every 64-byte line of `bytes` at byte `at` + 2 KiB of the
// cache in `slot` has been asked for, so that memory works ahead of the dot products.
kvalue prefetch_cache(kernel_builder& kb, int slot, kvalue at, std::int64_t bytes, kvalue value) {
  constexpr std::int64_t distance = 2048;
  for (std::int64_t line = 0; line * 64 < bytes; ++line) value = kb.prefetch(slot, at + (distance + line * 64), value);
  return value;
}

// 2^x for x <= 0 in ops that vectorize (llvm.exp2 becomes one libm call per element on x86,
// which made the softmax passes most of attention's time at long contexts): x = n + f with
// n = round(x) and f in [-1/2, 1/2], 2^f by a degree-6 polynomial, 2^n written into the
// exponent bits. Below -126 it is 0, so masked scores (-1e30) give exactly 0 as before.
// The coefficients interpolate 2^f at the 7 Chebyshev nodes of [-1/2, 1/2] (computed for
// this file); in float32 the relative error is under 1.1e-7 on that interval.
kvalue exp2_nonpositive(kernel_builder& kb, kvalue x) {
  constexpr double c[] = {1.0, 0.6931471824645996, 0.24022650718688965, 0.05550327152013779,
                          0.009618056938052177, 0.0013400427997112274, 0.00015461444854736328};
  auto low = x < -126.0;
  auto clamped = kb.where(low, kb.constant(dtype::float32, -126.0), x);
  auto n = kb.cast(dtype::int32, clamped - 0.5);  // truncation toward zero: round(x) for x <= 0
  auto f = clamped - kb.cast(dtype::float32, n);
  kvalue p = kb.constant(dtype::float32, c[6]);
  for (int i = 5; i >= 0; --i) p = p * f + c[i];
  auto scale = kb.bitcast(dtype::float32, (n + 127) << 23);
  return kb.where(low, kb.constant(dtype::float32, 0.0), p * scale);
}

// exp(s[row][c] - m[row]), from scores in slot 1 and row maxima in slot 2.
kvalue shifted_exp(kernel_builder& kb, kvalue row, kvalue ctx, kvalue c) {
  return exp2_nonpositive(kb, (kb.load<float>(1, row * ctx + c) - kb.load<float>(2, row)) * log2_e);
}

// RoPE's rotation of element d of a head vector: its pair's partner, which of the two it is, and
// the index of their angle. NORM rotates (2i, 2i+1); NEOX rotates (i, i + half).
struct rope_pair {
  kvalue partner, first, angle;
};
rope_pair pair_of(kernel_builder& kb, const attention_shape& s, kvalue d) {
  const std::int64_t hd = s.head_dim, half = hd / 2;
  if (s.rope == rope_style::norm) return {d + 1 - (d % 2) * 2, d % 2 < kb.index(1), d / 2};
  return {(d + half) % hd, d < kb.index(half), d % half};
}

// Element d of the head at `head_at` (floats of x in `slot`) rotated at token t's angles, the
// tables in slots cos_slot and cos_slot + 1 (this chunk's rows [t][head_dim / 2]).
kvalue rotated(kernel_builder& kb, const attention_shape& s, int slot, kvalue head_at, kvalue t, kvalue d, int cos_slot) {
  const rope_pair p = pair_of(kb, s, d);
  const std::int64_t half = s.head_dim / 2;
  auto x = kb.load<float>(slot, head_at + d), xp = kb.load<float>(slot, head_at + p.partner);
  auto cos = kb.load<float>(cos_slot, t * half + p.angle), sin = kb.load<float>(cos_slot + 1, t * half + p.angle);
  return x * cos + kb.where(p.first, -xp, xp) * sin;  // the pair's first member takes -sin
}

// Where token t's head h begins in an activation laid out as `rows` says, `heads` heads a row.
kvalue head_at(kernel_builder& kb, const attention_shape& s, head_rows rows, std::int64_t heads, kvalue t, kvalue h) {
  if (rows.stride == 0) return (t * heads + h) * s.head_dim;
  return t * rows.stride + kb.index(rows.offset) + h * s.head_dim;
}

// Output ranges of one work-item per element d of a query head, the heads of a GQA group
// innermost but for d (each key or value row is then read once for all of them): KV head, token,
// the head within its group; and h, that query head's number.
struct head_elements {
  kvalue kvh, t, g, d, h;
};
head_elements query_head_elements(kernel_builder& kb, const attention_shape& s) {
  const std::int64_t group = s.n_head / s.n_kv_head;
  auto kvh = kb.output_range(s.n_kv_head);
  auto t = kb.output_range(chunk_tokens(kb, s));
  auto g = kb.output_range(group);
  auto d = kb.output_range(s.head_dim);
  return {kvh, t, g, d, kvh * group + g};
}

}  // namespace

ast::kernel rope_kernel(const attention_shape& s, std::int64_t heads, bool to_cache, head_rows rows) {
  kernel_builder kb;
  const std::int64_t hd = s.head_dim;
  auto h = kb.output_range(heads);
  auto t = kb.output_range(chunk_tokens(kb, s));
  auto d = kb.output_range(hd);
  auto pos = kb.variable(var_start_pos) + t;
  auto value = rotated(kb, s, 1, head_at(kb, s, rows, heads, t, h), t, d, 2);
  if (to_cache) kb.store(0, (h * s.max_context + pos) * hd + d, kb.cast(s.cache, value));
  else kb.store(0, (t * heads + h) * hd + d, value);
  return kb.finish();
}

ast::kernel rope_store_kernel(const attention_shape& s, const std::array<head_rows, 3>& rows) {
  kernel_builder kb;
  const std::int64_t hd = s.head_dim;
  const auto [kvh, t, g, d, h] = query_head_elements(kb, s);
  auto at = (kvh * s.max_context + kb.variable(var_start_pos) + t) * hd + d;  // in the caches
  kb.store(0, (t * s.n_head + h) * hd + d, rotated(kb, s, 3, head_at(kb, s, rows[0], s.n_head, t, h), t, d, 6));
  // Once for each query head of the group: the same value into the same place.
  kb.store(1, at, kb.cast(s.cache, rotated(kb, s, 4, head_at(kb, s, rows[1], s.n_kv_head, t, kvh), t, d, 6)));
  kb.store(2, at, kb.cast(s.cache, kb.load<float>(5, head_at(kb, s, rows[2], s.n_kv_head, t, kvh) + d)));
  return kb.finish();
}

ast::kernel cache_store_kernel(const attention_shape& s, head_rows rows) {
  kernel_builder kb;
  const std::int64_t hd = s.head_dim;
  auto h = kb.output_range(s.n_kv_head);
  auto t = kb.output_range(chunk_tokens(kb, s));
  auto d = kb.output_range(hd);
  auto pos = kb.variable(var_start_pos) + t;
  auto v_at = rows.stride == 0 ? (t * s.n_kv_head + h) * hd + d : t * rows.stride + kb.index(rows.offset) + h * hd + d;
  kb.store(0, (h * s.max_context + pos) * hd + d, kb.cast(s.cache, kb.load<float>(1, v_at)));
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
  auto t = kb.output_range(chunk_tokens(kb, s));
  auto c = kb.output_range(context(kb, s));
  auto g = kb.output_range(group);
  auto h = kvh * group + g;
  auto dg = kb.reduce_range(hd / lanes);
  auto dl = kb.reduce_range(lanes);
  auto d = dg * lanes + dl;
  auto q = kb.load<float>(1, (t * s.n_head + h) * hd + d);
  auto k = kb.load(2, s.cache, (kvh * s.max_context + c) * hd + d);
  auto dot = kb.sum_lanes(kb.sum(q * k, dg), dl) * (1.0 / std::sqrt(double(hd)));
  auto visible = c < kb.variable(var_start_pos) + t + 1;
  auto ctx = context(kb, s);
  auto score = kb.where(visible, dot, kb.constant(dtype::float32, masked));
  const std::int64_t row_bytes = hd * size_bytes(s.cache);
  score = prefetch_cache(kb, 2, (kvh * s.max_context + c) * row_bytes, row_bytes, score);  // once per key row
  kb.store(0, (h * chunk_tokens(kb, s) + t) * ctx + c, score);
  ast::kernel kernel = kb.finish();
  kernel.upcast = {1, 1, 1, int(group)};
  kernel.vector_lanes = false;
  return kernel;
}

ast::kernel softmax_max_kernel(const attention_shape& s) {
  kernel_builder kb;
  auto h = kb.output_range(s.n_head);
  auto t = kb.output_range(chunk_tokens(kb, s));
  auto ctx = context(kb, s);
  auto c = kb.reduce_range(ctx);
  auto row = h * chunk_tokens(kb, s) + t;
  kb.store(0, row, kb.max(kb.load<float>(1, row * ctx + c), c));
  return kb.finish();
}

ast::kernel softmax_exp_kernel(const attention_shape& s) {
  kernel_builder kb;
  auto h = kb.output_range(s.n_head);
  auto t = kb.output_range(chunk_tokens(kb, s));
  auto ctx = context(kb, s);
  auto c = kb.output_range(ctx);
  auto row = h * chunk_tokens(kb, s) + t;
  kb.store(0, row * ctx + c, shifted_exp(kb, row, ctx, c));
  return kb.finish();
}

ast::kernel softmax_sum_kernel(const attention_shape& s) {
  kernel_builder kb;
  auto h = kb.output_range(s.n_head);
  auto t = kb.output_range(chunk_tokens(kb, s));
  auto ctx = context(kb, s);
  auto c = kb.reduce_range(ctx);
  auto row = h * chunk_tokens(kb, s) + t;
  kb.store(0, row, kb.sum(kb.load<float>(1, row * ctx + c), c));
  return kb.finish();
}

// The query heads of a KV head as scalar lanes (each value row loads once for all of them),
// d as the vector. On the CPU the exponentials come ready (softmax_exp_kernel): computing exp
// here repeated it for every 8 values of d (1B, 1272-token prompt: this kernel took 16% of the
// prefill and 12% of decode at that context). Dividing by the row sum once per output instead
// of once per probability saves a pass over them. From the scores alone (a GPU's decode up to
// short_attention_context) the max, exp and sum passes' dispatches are gone too: each work-item
// reads its heads' score rows twice more, from the cache, before the values, and computes the
// exponentials itself.
ast::kernel attend_kernel(const attention_shape& s, softmax_from from) {
  kernel_builder kb;
  const std::int64_t hd = s.head_dim, group = s.n_head / s.n_kv_head;
  const auto [kvh, t, g, d, h] = query_head_elements(kb, s);
  auto ctx = context(kb, s);
  auto c = kb.reduce_range(ctx);
  auto row = h * chunk_tokens(kb, s) + t;
  kvalue p, row_sum;
  if (from == softmax_from::scores) {
    // The row's maximum and the sum of its exponentials, each in a loop of its own: neither
    // depends on c or d, so the codegen computes them once, before the weighted sum's loop
    // (llvm_emitter.hpp: invariant_reduces).
    auto cm = kb.reduce_range(ctx), cs = kb.reduce_range(ctx);
    auto m = kb.max(kb.load<float>(1, row * ctx + cm), cm);
    auto exp_at = [&](kvalue at) { return exp2_nonpositive(kb, (kb.load<float>(1, row * ctx + at) - m) * log2_e); };
    p = exp_at(c);
    row_sum = kb.sum(exp_at(cs), cs);
  } else {
    p = kb.load<float>(1, row * ctx + c);
    row_sum = kb.load<float>(3, h * chunk_tokens(kb, s) + t);
  }
  auto v = kb.load(2, s.cache, (kvh * s.max_context + c) * hd + d);
  // One prefetch per step: a step reads 8-32 values of d, at most one 64-byte line.
  v = prefetch_cache(kb, 2, ((kvh * s.max_context + c) * hd + d) * size_bytes(s.cache), 1, v);
  auto weighted = s.long_context ? kb.sum_long_walk(p * v, c) : kb.sum(p * v, c);
  kb.store(0, (t * s.n_head + h) * hd + d, weighted * kb.unary(ast::op::reciprocal, row_sum));
  ast::kernel kernel = kb.finish();
  // d as one vector of up to 32 lanes: each pass over the values then reads whole 64-byte
  // lines of an f16 cache (8 lanes read 16 bytes of each row per pass, 8 passes per row).
  for (int width : {32, 16, 8})
    if (hd % width == 0) {
      kernel.upcast = {1, 1, int(group), width};
      break;
    }
  return kernel;
}

ast::kernel attend_runs_kernel(const attention_shape& s, std::int64_t runs) {
  kernel_builder kb;
  const std::int64_t hd = s.head_dim, group = s.n_head / s.n_kv_head;
  auto kvh = kb.output_range(s.n_kv_head);
  auto r = kb.output_range(runs);
  auto t = kb.output_range(chunk_tokens(kb, s));
  auto g = kb.output_range(group);
  auto d = kb.output_range(hd);
  auto h = kvh * group + g;
  auto ctx = context(kb, s);
  auto length = (ctx + (runs - 1)) / kb.index(runs);
  auto j = kb.reduce_range(length);
  auto c = r * length + j;
  auto inside = c < ctx;  // the last runs may reach past the context
  auto p = kb.load(1, dtype::float32, (h * chunk_tokens(kb, s) + t) * ctx + c, inside);
  auto v = kb.load(2, s.cache, (kvh * s.max_context + c) * hd + d, inside);
  kb.store(0, ((r * chunk_tokens(kb, s) + t) * s.n_head + h) * hd + d, kb.sum(p * v, j));
  return kb.finish();
}

ast::kernel attend_join_kernel(const attention_shape& s, std::int64_t runs) {
  kernel_builder kb;
  const std::int64_t hd = s.head_dim;
  auto t = kb.output_range(chunk_tokens(kb, s));
  auto h = kb.output_range(s.n_head);
  auto d = kb.output_range(hd);
  auto r = kb.reduce_range(runs);
  auto part = kb.load<float>(1, ((r * chunk_tokens(kb, s) + t) * s.n_head + h) * hd + d);
  auto row_sum = kb.load<float>(2, h * chunk_tokens(kb, s) + t);
  kb.store(0, (t * s.n_head + h) * hd + d, kb.sum(part, r) * kb.unary(ast::op::reciprocal, row_sum));
  return kb.finish();
}

}  // namespace tg::model
