// transformer.cpp: a transformer's buffers and kernels, and its forward calls (the order the
// kernels of a step run in: transformer_layer.cpp).
#include "llm/model/transformer.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include <tg/core/error.hpp>
#include <tg/graph.hpp>
#include <tg/log.hpp>

#include "llm/gguf/gguf_file.hpp"
#include "llm/model/activation_kernels.hpp"
#include "llm/model/attention_kernels.hpp"
#include "llm/model/launch_vars.hpp"
#include "llm/model/layer_plans.hpp"
#include "llm/model/linear_kernels.hpp"
#include "llm/model/matmul_tiles.hpp"
#include "llm/model/memory_plan.hpp"
#include "llm/model/transformer_state.hpp"

namespace tg::model {

namespace {

// Zeroed, so nothing ever reads uninitialized memory.
buffer floats(device& dev, std::int64_t n) {
  std::vector<float> zeros(std::size_t(std::max<std::int64_t>(n, 1)), 0.0f);
  buffer b = dev.allocate(zeros.size() * 4);
  b.copy_in(zeros.data(), zeros.size() * 4);
  return b;
}

// cos/sin of position * freq_i for i < rope_dim / 2 (tinygrad/llm/model.py: precompute_freqs_cis), in double then
// rounded; Llama 3's rope_freqs factors divide the frequencies. Kept on the host: each forward
// uploads the rows of its positions, which RoPE reads as plain [t][i] inputs.
void fill_rope_tables(const model_config& c, std::int64_t context, const std::vector<float>& factors,
                      std::vector<float>& cos_table, std::vector<float>& sin_table) {
  const std::int64_t half = c.head_dim / 2;
  cos_table.assign(std::size_t(context * half), 0.0f);
  sin_table.assign(cos_table.size(), 0.0f);
  for (std::int64_t i = 0; i < half; ++i) {
    double freq = std::pow(c.rope_theta, -2.0 * double(i) / double(c.rope_dim));
    if (!factors.empty()) freq /= double(factors[std::size_t(i)]);
    for (std::int64_t p = 0; p < context; ++p) {
      double a = double(p) * freq;
      cos_table[std::size_t(p * half + i)] = float(std::cos(a));
      sin_table[std::size_t(p * half + i)] = float(std::sin(a));
    }
  }
}

// The cache's element type for `requested` on this model (transformer.hpp).
kv_cache_type resolve_cache_type(kv_cache_type requested, const model_weights& w) {
  if (requested != kv_cache_type::automatic) return requested;
  return !w.layers.empty() && w.layers[0].wq.type == gguf::tensor_type::f32 ? kv_cache_type::f32 : kv_cache_type::f16;
}

// A KV cache, zeroed: every byte written once, so a long-context read streams real pages
// (untouched ones all map the kernel's one zero page, which would read as if from cache).
buffer zeroed_cache(device& dev, const std::vector<char>& zeros) {
  buffer b = dev.allocate(zeros.size());
  b.copy_in(zeros.data(), zeros.size());
  return b;
}

// The memory plan checked (memory_plan.hpp: a model that cannot fit fails here, before its
// first allocation), then the weights loaded.
model_weights load_planned(device& dev, const gguf::file& file, const model_config& c, const transformer_options& o) {
  const memory_plan plan = plan_memory(dev, file, c, o);
  if (plan.free && debug_level() >= 1)
    log(log_level::debug, str(file.name(), ": memory plan: weights ", plan.need.weights >> 10, " KiB, KV cache ",
                              plan.need.kv_cache >> 10, " KiB, activations ", plan.need.activations >> 10, " KiB, kernels ",
                              plan.need.kernels >> 10, " KiB; ", *plan.free >> 10, " KiB free on ", dev.name()));
  require_fits(plan, file.name());
  return load_model_weights(dev, file, c);
}

}  // namespace

const char* kv_cache_type_name(kv_cache_type type) {
  switch (type) {
    case kv_cache_type::automatic: return "auto";
    case kv_cache_type::f32: return "f32";
    case kv_cache_type::f16: return "f16";
  }
  return "?";
}

transformer::transformer(device& dev, const gguf::file& file, transformer_options options)
    : dev_(dev), config_(model_config::from_gguf(file)), weights_(load_planned(dev, file, config_, options)) {
  const model_config& c = config_;
  if (c.rope_dim != c.head_dim)
    throw usage_error(str(file.name(), ": partial RoPE (", c.rope_dim, " of ", c.head_dim, " dims) is not supported"));
  if (options.max_context < 1 || options.chunk_size < 1)
    throw usage_error(str("transformer: max_context (", options.max_context, ") and chunk_size (", options.chunk_size,
                          ") must be at least 1"));
  max_context_ = std::min(options.max_context, c.context_length);
  cache_type_ = resolve_cache_type(options.cache, weights_);
  using graph_use = transformer_options::graph_use;
  graphs_ = options.graphs == graph_use::on || (options.graphs == graph_use::automatic && !dev.impl().reads_host_memory());
  chunk_size_ = std::min(options.chunk_size, max_context_);
  s_ = std::make_unique<state>();
  state& s = *s_;
  const std::int64_t T = chunk_size_, qw = c.n_head * c.head_dim, kvw = c.n_kv_head * c.head_dim;
  for (buffer* b : {&s.x, &s.x2, &s.hn}) *b = floats(dev, T * c.dim);
  for (buffer* b : {&s.q, &s.qr, &s.att}) *b = floats(dev, T * qw);
  for (buffer* b : {&s.k, &s.kn, &s.v}) *b = floats(dev, T * kvw);
  s.stacked = floats(dev, T * (qw + 2 * kvw));
  for (buffer* b : {&s.g, &s.u, &s.ff}) *b = floats(dev, T * c.ffn);
  // Exponentials apart from the scores: written in place, the exp loop's aliasing check
  // failed and it ran scalar (0.4 ms a layer at context 4096, 1B, context_bench -v).
  s.scores = floats(dev, c.n_head * T * max_context_);
  s.probs = floats(dev, c.n_head * T * max_context_);
  s.row_max = floats(dev, c.n_head * T);
  s.row_sum = floats(dev, c.n_head * T);
  s.attend_runs = floats(dev, attention_runs * T * qw);  // a GPU's weighted sum in runs (attention_passes)
  s.scale = floats(dev, T * std::max(c.n_head, std::int64_t(1)));
  s.logits = floats(dev, T * c.vocab);
  s.tokens = dev.allocate(std::size_t(T) * 4);
  const std::int64_t widest = std::max({c.dim, qw, c.ffn});
  // The int8 copy for the CPU's quad kernels (VNNI tiles, and the decode quads of AVX2 and
  // AVX-512 VNNI: linear_kernels.cpp, cpu_decode_quads); a GPU rounds to int8 in xq itself. The
  // per-8 sums are for Q6_K's decode tiles, a CPU layout too (memory_plan.cpp counts neither).
  const bool byte_copy = matmul_form_for(dev) != matmul_form::gpu;
  for (std::int64_t block : {std::int64_t(32), std::int64_t(256)})
    s.rounded[block] = {dev.allocate(std::size_t(T * widest) * 2), floats(dev, T * widest / activation_block),
                        floats(dev, T * widest / activation_block),
                        byte_copy ? dev.allocate(std::size_t(T * widest)) : buffer{},
                        byte_copy && block == 256 ? dev.allocate(std::size_t(T * widest / 8) * 2) : buffer{}};
  s.rope_cos = floats(dev, T * c.head_dim / 2);
  s.rope_sin = floats(dev, T * c.head_dim / 2);
  s.eps = dev.allocate(4);
  s.eps.copy_in(&c.eps, 4);
  std::vector<float> factors;
  if (weights_.rope_freqs) {
    factors.resize(std::size_t(c.rope_dim / 2));
    weights_.rope_freqs->data.copy_out(factors.data(), factors.size() * 4);
  }
  fill_rope_tables(c, max_context_, factors, s.cos_table, s.sin_table);

  const dtype cache_dtype = cache_type_ == kv_cache_type::f16 ? dtype::float16 : dtype::float32;
  attention_shape shape{c.n_head, c.n_kv_head, c.head_dim, max_context_, c.rope, cache_dtype};
  s.embed = embedding_kernel(weights_.token_embd);
  s.norm_scale = rms_scale_op(dev, T, 1, c.dim);
  s.norm_apply = rms_apply_op(dev, T, 1, c.dim);
  if (c.qk_norm) {
    s.head_scale_q = rms_scale_op(dev, T, c.n_head, c.head_dim);
    s.head_scale_k = rms_scale_op(dev, T, c.n_kv_head, c.head_dim);
    s.head_apply_k = rms_apply_op(dev, T, c.n_kv_head, c.head_dim);
  }
  s.rope_q = rope_op(dev, T, c.n_head, c.head_dim, c.rope, c.qk_norm);  // with qwen3's q_norm fused in
  // Keys stay hand-written: RoPE writes them straight into the cache at rows start_pos + t,
  // and a plan can only store a whole fresh buffer (the DSL has no store into a slice at a
  // run-time offset), so a DSL RoPE would need one more kernel per layer to copy them there.
  s.rope_k = rope_kernel(shape, c.n_kv_head, true);
  s.store_v = cache_store_kernel(shape);
  const matmul_form form = matmul_form_for(dev);
  for (const layer_weights& l : weights_.layers) {
    const std::array<head_rows, 3> rows = projection_rows(l, qw, kvw);
    if (form == matmul_form::gpu && !c.qk_norm && !s.rope_store.contains(rows))
      s.rope_store[rows] = rope_store_kernel(shape, rows);
    if (rows[0].stride != 0 && !s.rope_q_rows.contains(rows[0]))
      s.rope_q_rows[rows[0]] = rope_kernel(shape, c.n_head, false, rows[0]);
    if (rows[1].stride != 0 && !s.rope_k_rows.contains(rows[1]))
      s.rope_k_rows[rows[1]] = rope_kernel(shape, c.n_kv_head, true, rows[1]);
    if (rows[2].stride != 0 && !s.store_v_rows.contains(rows[2]))
      s.store_v_rows[rows[2]] = cache_store_kernel(shape, rows[2]);
  }
  // On GPUs a full chunk takes kernels fixed to its length (linear::chunk, chunk_attention).
  const bool fixed_chunks = form == matmul_form::gpu && chunk_size_ % prefill_token_lanes == 0;
  s.fuse_matmuls = form == matmul_form::gpu;
  s.rounds_to_bytes = form == matmul_form::gpu;
  // A GPU's decode step runs attention in two kernels, the scores and the weighted sum, which
  // finds each row's max and sum of exponentials itself (softmax_from::scores): four dispatches
  // fewer a layer than the passes. Past short_attention_context its serial walks cost more than
  // the dispatches, and there, and for chunk tails, the passes run with the weighted sum split in
  // attention_runs runs over the context (attend_runs_kernel), so that many more waves share the
  // walk. Modeled on an RX 7900 XTX (tests/bench/gpu_attention_sweep), the 8B's heads of 128,
  // attention a layer after the scores: one kernel 18.0 us at context 1024, 34.0 at 2048, 66.0 at
  // 4096; in runs 15.5, 19.8, 29.0. The passes this path had before (the exponentials computed in
  // the sum and in one weighted sum, no exp pass; since removed) measured 17.2, 27.5, 48.1, and
  // 89.3 at 8192 against 47.4 in runs. The 1B's heads of 64 in runs lost up to 1.8 us to those
  // below 2048 and gain past it (4096: 31.1 -> 24.6 us; 8192: 55.7 -> 38.6). Full chunks keep
  // the exp pass and one weighted sum: with the exps inline it took 20 us a layer against 4.9
  // (the 1B's chunk of 32, when measured). Past short_attention_context a full chunk's weighted
  // sum is hinted long (attention_shape::long_context; runtime/opt/gpu_heuristic.cpp:
  // split_tiled_walk): the 1B's at context 4096 66.5 -> 56.6 us, the 8B's 108.2 -> 99.5.
  const bool gpu = form == matmul_form::gpu;
  s.attention = gpu ? attention_passes(shape, softmax_from::probabilities, attention_runs)
                    : attention_passes(shape, softmax_from::probabilities);
  if (gpu) s.short_attention = attention_passes(shape, softmax_from::scores);
  if (fixed_chunks) {
    attention_shape full = shape;
    full.tokens = T;
    s.chunk_attention = attention_passes(full, softmax_from::probabilities);
    if (max_context_ > short_attention_context) {
      full.long_context = true;
      s.long_chunk_attention = attention_passes(full, softmax_from::probabilities);
    }
  }
  s.swiglu = swiglu_op(dev, T, c.ffn);
  const bool bytes = form == matmul_form::gpu;  // a GPU's matmuls read the rounded activations as int8
  s.output = {&weights_.output, matmul_kernel(weights_.output, var_head_rows, var_head_first, {}, form), {},
              matmul_batch_kernel(weights_.output, {}, var_head_rows, form)};
  for (std::int64_t block : {std::int64_t(32), std::int64_t(256)}) {
    if (c.dim % block == 0)
      s.head_quant[block] = {activation_scale_kernel(c.dim, var_head_rows, var_head_first, block),
                             activation_quant_kernel(c.dim, var_head_rows, var_head_first, block, bytes),
                             activation_sum_kernel(c.dim, var_head_rows, block, bytes),
                             activation_byte_kernel(c.dim, var_head_rows),
                             block == 256 ? launchable(activation_sum8_kernel(c.dim, var_head_rows, bytes)) : launchable{}};
    for (std::int64_t width : {c.dim, qw, c.ffn})
      if (width % block == 0)
        s.act_quant[{width, block}] = {activation_scale_kernel(width, var_tokens, -1, block),
                                       activation_quant_kernel(width, var_tokens, -1, block, bytes),
                                       activation_sum_kernel(width, var_tokens, block, bytes),
                                       activation_byte_kernel(width, var_tokens),
                                       block == 256 ? launchable(activation_sum8_kernel(width, var_tokens, bytes)) : launchable{}};
    if (c.dim % block == 0) {
      if (form == matmul_form::gpu) s.norm_scale_round[block] = norm_scale_round_kernel(c.dim, block);
      s.norm_round_scale[block] = norm_round_scale_op(dev, T, c.dim, block);
      s.norm_round[block] = norm_round_op(dev, T, c.dim, block, bytes);
    }
    if (form == matmul_form::gpu && c.ffn % block == 0) {
      s.swiglu_round_scale[block] = swiglu_round_scale_op(dev, T, c.ffn, block);
      s.swiglu_round[block] = swiglu_round_op(dev, T, c.ffn, block);
    }
  }
  if (options.sequences < 1) throw usage_error(str("transformer: sequences (", options.sequences, ") must be at least 1"));
  const std::vector<char> cache_zeros(std::size_t(c.n_kv_head * max_context_ * c.head_dim) * std::size_t(size_bytes(cache_dtype)));
  // Per-row views of the activations attention reads and writes (decode_batch).
  row_views views;
  // Only where buffers are host memory (the CPU): a GPU buffer's data() is its allocation, not bytes.
  bool in_place = dev.impl().reads_host_memory();
  auto view_rows = [&](const buffer& b, std::int64_t row_floats, std::vector<buffer>& out) {
    if (!in_place) return;
    for (std::int64_t t = 0; t < T; ++t) {
      const auto* at = static_cast<const char*>(b.data()) + std::size_t(t * row_floats) * 4;
      out.push_back(dev.borrow_host(at, std::size_t(row_floats) * 4));
      in_place = in_place && out.back().data() == at;
    }
  };
  view_rows(s.qr, qw, views.qr);
  view_rows(s.k, kvw, views.k);
  view_rows(s.kn, kvw, views.kn);
  view_rows(s.v, kvw, views.v);
  view_rows(s.att, qw, views.att);
  view_rows(s.rope_cos, c.head_dim / 2, views.cos);
  view_rows(s.rope_sin, c.head_dim / 2, views.sin);
  if (in_place) s.rows = std::move(views);
  for (const layer_weights& l : weights_.layers) {
    layer_kernels k;
    auto lin = [&](const weight& w, matmul_epilogue e = {}) {
      return linear{&w, matmul_kernel(w, var_tokens, -1, e, form), matmul_prefill_kernel(w, e, form),
                    matmul_batch_kernel(w, e, var_tokens, form),
                    fixed_chunks ? matmul_prefill_kernel(w, e, form, chunk_size_) : ast::kernel{}};
    };
    const int first = l.stacked ? l.stacked->first : 3, last = l.stacked ? first + l.stacked->count : 3;
    if (l.stacked) k.stacked = lin(l.stacked->w, {.bias = bool(l.stacked->bias)});
    linear* own[3] = {&k.q, &k.k, &k.v};
    const weight* ws[3] = {&l.wq, &l.wk, &l.wv};
    const bool biased[3] = {bool(l.bq), bool(l.bk), bool(l.bv)};
    for (int i = 0; i < 3; ++i)
      if (i < first || i >= last) *own[i] = lin(*ws[i], {.bias = biased[i]});
    k.o = lin(l.wo, {.residual = true});
    k.gate = lin(l.gate);
    k.up = lin(l.up);
    k.down = lin(l.down, {.residual = true});
    for (int q = 0; q < options.sequences; ++q) {
      k.k_cache.push_back(zeroed_cache(dev, cache_zeros));
      k.v_cache.push_back(zeroed_cache(dev, cache_zeros));
    }
    s.layers.push_back(std::move(k));
  }
}

transformer::~transformer() = default;

std::uint64_t transformer::kv_bytes_read(std::int64_t context) const {
  const std::int64_t element = cache_type_ == kv_cache_type::f16 ? 2 : 4;
  return std::uint64_t(2 * config_.n_layer * config_.n_kv_head * context * config_.head_dim * element);
}
std::uint64_t transformer::kv_cache_bytes() const { return kv_bytes_read(max_context_); }

int transformer::sequences() const { return int(s_->layers.empty() ? 1 : s_->layers[0].k_cache.size()); }

std::vector<float> transformer::forward(std::span<const std::int32_t> tokens, std::int64_t start_pos, head which,
                                        int sequence) {
  const std::int64_t T = std::int64_t(tokens.size());
  if (T < 1 || T > chunk_size_)
    throw usage_error(str("transformer::forward: ", T, " tokens; a chunk holds 1 to ", chunk_size_));
  if (start_pos < 0 || start_pos + T > max_context_)
    throw usage_error(str("transformer::forward: positions ", start_pos, "..", start_pos + T - 1,
                          " pass the context length ", max_context_));
  for (std::int32_t id : tokens)
    if (id < 0 || id >= config_.vocab)
      throw usage_error(str("transformer::forward: token id ", id, " is outside the vocabulary (", config_.vocab, ")"));
  if (sequence < 0 || sequence >= sequences())
    throw usage_error(str("transformer::forward: sequence ", sequence, " is not one of the ", sequences(), " KV caches"));
  state& s = *s_;
  tokens_forwarded_ += T;
  s.sequence = sequence;
  s.vars = {T, start_pos, which == head::all ? T : 1, which == head::all ? 0 : T - 1};
  const std::size_t half = std::size_t(config_.head_dim / 2), first = std::size_t(start_pos) * half;
  s.rope_cos.copy_in(s.cos_table.data() + first, std::size_t(T) * half * 4);
  s.rope_sin.copy_in(s.sin_table.data() + first, std::size_t(T) * half * 4);
  s.tokens.copy_in(tokens.data(), tokens.size() * 4);
  // A decode step or a prefill chunk: its graph.
  const bool graphed = graphs_ && !s.profiling && which != head::all;
  if (graphed) {
    graph& step = s.step_graphs[{sequence, T, which, &s.attention_for(start_pos, T, chunk_size_)}];
    if (!step) step = capture_step(start_pos, which);
    step.replay({start_pos});
  } else {
    run_step(which);
    if (s.profiling) s.collect_profile();
  }
  if (which == head::none) return {};
  std::vector<float> logits(std::size_t(s.vars[var_head_rows] * config_.vocab));
  dev_.synchronize();
  s.logits.copy_out(logits.data(), logits.size() * 4);
  return logits;
}

std::vector<float> transformer::decode_batch(std::span<const std::int32_t> tokens, std::span<const std::int64_t> positions,
                                             std::span<const int> seqs) {
  const std::int64_t n = std::int64_t(tokens.size());
  if (n < 1 || n > chunk_size_ || positions.size() != tokens.size() || seqs.size() != tokens.size())
    throw usage_error(str("transformer::decode_batch: ", n, " tokens, ", positions.size(), " positions and ", seqs.size(),
                          " sequences; give 1 to ", chunk_size_, " of each"));
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (seqs[i] < 0 || seqs[i] >= sequences())
      throw usage_error(str("transformer::decode_batch: sequence ", seqs[i], " is not one of the ", sequences(), " KV caches"));
    if (positions[i] < 0 || positions[i] >= max_context_)
      throw usage_error(str("transformer::decode_batch: position ", positions[i], " passes the context length ", max_context_));
    if (tokens[i] < 0 || tokens[i] >= config_.vocab)
      throw usage_error(str("transformer::decode_batch: token id ", tokens[i], " is outside the vocabulary (", config_.vocab, ")"));
    for (std::size_t j = 0; j < i; ++j)
      if (seqs[j] == seqs[i]) throw usage_error(str("transformer::decode_batch: sequence ", seqs[i], " appears twice"));
  }
  state& s = *s_;
  if (!s.rows || n == 1) {  // one row, or a device whose buffers cannot be viewed by row: one pass each
    std::vector<float> all;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::vector<float> row = forward(tokens.subspan(i, 1), positions[i], head::last, seqs[i]);
      all.insert(all.end(), row.begin(), row.end());
    }
    return all;
  }
  tokens_forwarded_ += n;
  s.vars = {n, 0, n, 0};
  const std::size_t half = std::size_t(config_.head_dim / 2);
  std::vector<float> cos(std::size_t(n) * half), sin(cos.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::copy_n(s.cos_table.data() + std::size_t(positions[i]) * half, half, cos.data() + i * half);
    std::copy_n(s.sin_table.data() + std::size_t(positions[i]) * half, half, sin.data() + i * half);
  }
  s.rope_cos.copy_in(cos.data(), cos.size() * 4);
  s.rope_sin.copy_in(sin.data(), sin.size() * 4);
  s.tokens.copy_in(tokens.data(), tokens.size() * 4);
  s.batch_positions.assign(positions.begin(), positions.end());
  s.batch_sequences.assign(seqs.begin(), seqs.end());
  s.run(dev_, s.embed, {s.x, weights_.token_embd.data, s.tokens});
  for (std::size_t i = 0; i < s.layers.size(); ++i) run_layer(i);
  s.batch_positions.clear();
  s.batch_sequences.clear();
  run_head();
  if (s.profiling) s.collect_profile();
  std::vector<float> logits(std::size_t(n * config_.vocab));
  dev_.synchronize();
  s.logits.copy_out(logits.data(), logits.size() * 4);
  return logits;
}

void transformer::set_profiling(bool on) {
  s_->collect_profile();  // spans of launches still pending belong to entries about to go
  s_->profiling = on;
  s_->profile.clear();
}

std::int64_t transformer::token_tile() const { return prefill_token_lanes; }

void transformer::prepare_partial_chunks() {
  for (layer_kernels& k : s_->layers)
    for (const linear* l : {&k.q, &k.k, &k.v, &k.stacked, &k.o, &k.gate, &k.up, &k.down})
      if (l->w != nullptr && !l->prefill.prepared) l->prefill.prepared = dev_.prepare(l->prefill.kernel);
  // And the attention passes of chunk tails, which on GPUs a decode step does not run (it takes
  // state::short_attention).
  // And a full chunk's past short_attention_context (its weighted sum split wider).
  for (attention_passes* a : {&s_->attention, &s_->long_chunk_attention})
    for (launchable* pass : {&a->scores, &a->max, &a->exp, &a->sum, &a->attend, &a->join})
      if (!pass->kernel.nodes.empty() && !pass->prepared) pass->prepared = dev_.prepare(pass->kernel);
}

bool transformer::profiling() const { return s_->profiling; }

void transformer::set_launch_observer(launch_observer observer) { s_->observer = std::move(observer); }

std::string transformer::profile_report() const {
  std::vector<std::pair<double, std::string>> rows;
  double total = 0;
  for (const auto& [name, entry] : s_->profile) {
    std::string line = name + " x" + std::to_string(entry.launches) + (entry.form.empty() ? "" : "  [" + entry.form + "]");
    if (entry.weight_bytes > 0 && entry.seconds > 0) {  // a matmul: how fast it read its weights
      char rate[64];
      std::snprintf(rate, sizeof rate, "  weights at %.1f GB/s", entry.weight_bytes / entry.seconds / 1e9);
      line += rate;
    }
    rows.push_back({entry.seconds, line});
    total += entry.seconds;
  }
  std::sort(rows.rbegin(), rows.rend());
  std::ostringstream out;
  for (const auto& [sec, what] : rows)
    out << str(sec * 1e3, " ms (", int(100 * sec / std::max(total, 1e-12)), "%) ", what, "\n");
  return out.str();
}

void transformer::run_step(head which) {
  state& s = *s_;
  s.run(dev_, s.embed, {s.x, weights_.token_embd.data, s.tokens});
  for (std::size_t i = 0; i < s.layers.size(); ++i) run_layer(i);
  if (which != head::none) run_head();
}

graph transformer::capture_step(std::int64_t start_pos, head which) {
  state& s = *s_;
  graph_builder builder(dev_);
  s.capture_pos = builder.var("start_pos", start_pos);
  s.capturing = &builder;
  try {
    run_step(which);
  } catch (...) {
    s.capturing = nullptr;
    throw;
  }
  s.capturing = nullptr;
  return builder.finish();
}

}  // namespace tg::model
