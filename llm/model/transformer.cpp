// transformer.cpp: buffers, kernels and the order they run in for one forward call.
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

namespace tg::model {

// A kernel and, from its first launch on, its compiled program, so that the ~26 launches of
// a layer each token skip the device's cache lookup (hashing the whole AST).
struct launchable {
  ast::kernel kernel;
  mutable prepared_kernel prepared;
  bool reads_sums = false;  // a matmul's: reads_activation_sums, asked once rather than every step
  launchable() = default;
  launchable(ast::kernel k) : kernel(std::move(k)), reads_sums(reads_activation_sums(kernel)) {}  // implicit
};

// A plan from tg::lower (layer_plans.hpp) and its kernels as launchables.
struct planned {
  plan_op op;
  std::vector<launchable> kernels;
  planned() = default;
  planned(plan_op o) : op(std::move(o)) {  // implicit: from the *_op functions
    for (std::size_t i = 0; i < op.size(); ++i) kernels.emplace_back(op.kernel(i));
  }
};

// A weight with the matmul kernel that reads it.
struct linear {
  const weight* w = nullptr;
  launchable kernel;
  launchable prefill;  // for chunks of a multiple of prefill_token_lanes tokens
  launchable batch;    // for decode batches of a multiple of prefill_token_lanes sequences
  // On GPUs, for full chunks (chunk_size tokens, a multiple of prefill_token_lanes): the prefill
  // kernel with its token count fixed, so that its schedule is chosen for that many tokens (a
  // prompt's full chunks are most of its work); empty elsewhere.
  launchable chunk;
};

// Attention's passes after RoPE and the cache write (attention_kernels.hpp), for one shape.
struct attention_passes {
  launchable scores, max, exp, sum, attend;
  attention_passes() = default;
  // from_scores (a GPU's decode): no exp pass; the sum and the weighted sum compute the
  // exponentials from the scores and maxima themselves (attention_kernels.hpp).
  attention_passes(const attention_shape& s, bool from_scores)
      : scores(scores_kernel(s)), max(softmax_max_kernel(s)),
        exp(from_scores ? ast::kernel{} : softmax_exp_kernel(s)), sum(softmax_sum_kernel(s, from_scores)),
        attend(attend_kernel(s, from_scores)) {}
  bool from_scores() const { return exp.kernel.nodes.empty(); }
};

// Whether a matmul kernel reads a weight's tiles (matmul_tiles.hpp: slot 7), not its file bytes.
bool reads_tiles(const launchable& k) { return k.kernel.slot_count == 8; }

// Where a layer's queries, keys and values lie in the stacked projections' output (stride 0: in
// their own buffers), qw and kvw wide.
std::array<head_rows, 3> projection_rows(const layer_weights& l, std::int64_t qw, std::int64_t kvw) {
  std::array<head_rows, 3> rows{};
  if (!l.stacked) return rows;
  const std::int64_t widths[3] = {qw, kvw, kvw};
  std::int64_t stride = 0;
  for (int i = l.stacked->first; i < l.stacked->first + l.stacked->count; ++i) stride += widths[i];
  std::int64_t offset = 0;
  for (int i = l.stacked->first; i < l.stacked->first + l.stacked->count; ++i) {
    rows[std::size_t(i)] = {stride, offset};
    offset += widths[i];
  }
  return rows;
}

// The 8-bit rounding of one matmul input width in one block size (activation_kernels.hpp).
struct activation_quant {
  launchable scale, quant, sum, bytes;  // bytes: the int8 copy for VNNI tiles (activation_byte_kernel)
};

// What the matmuls reading a rounded input take beside its int16 values and scales.
struct activation_needs {
  bool wanted = false, sums = false, bytes = false;
};

// Where an input rounded to 8 bits lives: int16 values, scales, per-32 sums, and where tiles
// hold quads (matmul_tiles.hpp: tile_quads_for) the values again as int8.
struct rounded_input {
  buffer xq, xs, xsum, xb;
};

struct layer_kernels {
  linear q, k, v, o, gate, up, down;
  linear stacked;  // the layer's stacked projections (layer_weights::stacked); q, k, v then unused where stacked
  std::vector<buffer> k_cache, v_cache;  // one per sequence
};

// Row t of an activation buffer as a buffer of its own, borrowed in place (no copy), so that
// attention can run on one sequence's row of a batch with the one-token kernels.
struct row_views {
  std::vector<buffer> qr, k, kn, v, att, cos, sin;
};

struct transformer::state {
  // Activations, sized for a full chunk.
  buffer x, x2, hn, q, k, v, kn, qr, scores, probs, row_max, row_sum, att, g, u, ff, scale, logits, tokens;
  buffer stacked;  // a layer's stacked projections' outputs [t][up to q + k + v widths] (projection_rows)
  buffer rope_cos, rope_sin;  // this chunk's rows of the tables below
  std::vector<float> cos_table, sin_table;  // [position][head_dim / 2], on the host
  buffer eps;  // the norms' epsilon, one float (the plans read it at run time)
  // An input rounded to 8 bits for the matmuls that take it, by block size (32, 256 for
  // K-quants); an input read by matmuls of both kinds is rounded both ways.
  std::map<std::int64_t, rounded_input> rounded;
  std::map<std::pair<std::int64_t, std::int64_t>, activation_quant> act_quant;  // by (input width, block), for the layers
  std::map<std::int64_t, activation_quant> head_quant;                          // by block
  launchable embed, rope_k, store_v;
  // RoPE of queries and keys and the value store reading stacked projections, by their rows.
  std::map<head_rows, launchable> rope_q_rows, rope_k_rows, store_v_rows;
  attention_passes attention;
  // On GPUs, the passes of a full chunk (attention_shape::tokens at the chunk size), as
  // linear::chunk is for its matmuls; empty elsewhere.
  attention_passes chunk_attention;
  planned norm_scale, norm_apply, head_scale_q, head_scale_k, head_apply_k, rope_q, swiglu;
  // RMSNorm fused into the 8-bit rounding of its output, by block size; on GPUs SwiGLU too
  // (empty elsewhere).
  std::map<std::int64_t, planned> norm_round_scale, norm_round, swiglu_round_scale, swiglu_round;
  std::vector<buffer> slots;  // scratch: a plan kernel's buffers
  linear output;
  std::vector<layer_kernels> layers;
  launch_values vars{};
  int sequence = 0;  // whose KV cache a forward() extends
  // During decode_batch: each row's position and sequence (empty otherwise).
  std::vector<std::int64_t> batch_positions;
  std::vector<int> batch_sequences;
  std::optional<row_views> rows;  // none where the device cannot borrow host memory in place

  // Per kernel name: launches, seconds and what the backend made of it, when profiling.
  struct profile_entry {
    std::int64_t launches = 0;
    double seconds = 0;
    double weight_bytes = 0;  // of a matmul's launches: the weight bytes they read
    std::string form;
  };
  bool profiling = false;
  std::map<std::string, profile_entry> profile;
  std::unique_ptr<launch_timer> timer;  // made at the first profiled launch
  std::vector<profile_entry*> timed;    // the entries of the launches timer has spans for, in order
  launch_observer observer;             // transformer::set_launch_observer's
  int layer = -1;                       // the layer run_layer is running, -1 outside it

  // A decode step (one token, its logits) and a prefill chunk (with or without its last logits)
  // replay a graph of the step's launches (include/tg/graph.hpp), one per sequence, token count
  // and head, captured at the first such step (the warm-up's for sequence 0, a decode step and a
  // full chunk of each head): on AMD the whole step is one submission with one wait; on the CPU a
  // prepared list with no per-launch lookup. A prompt's tail chunks come in few lengths (a multiple
  // of the token tile, then fewer than a tile: session.cpp's prefill_chunks), so after a few
  // prompts they replay too. Only start_pos changes between steps; the tokens and their RoPE rows
  // are copied into the same buffers first. All-position logits (head::all) always launch.
  std::map<std::tuple<int, std::int64_t, head>, graph> step_graphs;  // by sequence, tokens, head
  graph_builder* capturing = nullptr;  // while capturing: where run() adds launches
  graph_var capture_pos;

  // weight_bytes: what a matmul's launch reads of its weight, for the profile's bandwidth.
  void run(device& dev, const launchable& k, std::initializer_list<buffer> buffers, std::int64_t weight_bytes = 0) {
    run(dev, k, std::span<const buffer>(buffers.begin(), buffers.size()), weight_bytes);
  }
  void run(device& dev, const launchable& k, std::span<const buffer> buffers, std::int64_t weight_bytes = 0) {
    if (!k.prepared) k.prepared = dev.prepare(k.kernel);
    if (capturing) {
      const std::vector<graph_slot> slots(buffers.begin(), buffers.end());
      graph_value values[launch_var_count] = {vars[0], vars[1], vars[2], vars[3]};
      values[var_start_pos] = capture_pos;
      capturing->add(k.prepared, slots, values);
      return;
    }
    if (!profiling) {
      k.prepared.launch(buffers, vars);
      return;
    }
    if (!timer) timer = dev.impl().make_launch_timer();
    timer->start();
    k.prepared.launch(buffers, vars);
    timer->stop();
    const std::string name = kernel_name(k.kernel.nodes, k.kernel.global_ranges);
    auto& entry = profile[name];
    entry.launches += 1;
    entry.weight_bytes += double(weight_bytes);
    if (entry.form.empty()) entry.form = k.prepared.describe();
    timed.push_back(&entry);
    if (observer) observer(name, layer);
  }
  // The times of the launches since the last call, onto their kernels' entries (after a step:
  // a timer with a clock of its own waits only here).
  void collect_profile() {
    if (!timer) return;
    const std::vector<double> spans = timer->finish();
    for (std::size_t i = 0; i < spans.size() && i < timed.size(); ++i) timed[i]->seconds += spans[i];
    timed.clear();
  }

  void run(device& dev, const planned& p, std::initializer_list<named_buffer> named) {
    run(dev, p, std::span<const named_buffer>(named.begin(), named.size()));
  }
  void run(device& dev, const planned& p, std::span<const named_buffer> named) {
    for (std::size_t i = 0; i < p.kernels.size(); ++i) {
      p.op.slot_buffers(i, named, slots);
      run(dev, p.kernels[i], std::span<const buffer>(slots));
    }
  }

  // Rounds `in` to 8 bits in `to` with the kernels `k` of its width and block size, with the
  // per-32 sums when a reader wants them (activation_kernels.hpp).
  void round_input(device& dev, const activation_quant& k, const rounded_input& to, const buffer& in, std::int64_t block,
                   const activation_needs& needs) {
    run(dev, k.scale, {to.xs, in});
    run(dev, k.quant, {to.xq, in, to.xs});
    round_extras(dev, k, to, block, needs);
  }
  // The per-32 sums and the int8 copy, where a reader of the rounded input takes them.
  void round_extras(device& dev, const activation_quant& k, const rounded_input& to, std::int64_t block,
                    const activation_needs& needs) {
    if (needs.sums) round_sums(dev, k, to, block);
    if (needs.bytes) run(dev, k.bytes, {to.xb, to.xq});
  }
  void round_sums(device& dev, const activation_quant& k, const rounded_input& to, std::int64_t block) {
    if (block == activation_block) run(dev, k.sum, {to.xsum, to.xq, to.xs});
    else run(dev, k.sum, {to.xsum, to.xq});
  }
};

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
  s.scale = floats(dev, T * std::max(c.n_head, std::int64_t(1)));
  s.logits = floats(dev, T * c.vocab);
  s.tokens = dev.allocate(std::size_t(T) * 4);
  const std::int64_t widest = std::max({c.dim, qw, c.ffn});
  for (std::int64_t block : {std::int64_t(32), std::int64_t(256)})
    s.rounded[block] = {dev.allocate(std::size_t(T * widest) * 2), floats(dev, T * widest / activation_block),
                        floats(dev, T * widest / activation_block),
                        tile_quads_for(dev) ? dev.allocate(std::size_t(T * widest)) : buffer{}};
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
  for (const layer_weights& l : weights_.layers) {
    const std::array<head_rows, 3> rows = projection_rows(l, qw, kvw);
    if (rows[0].stride != 0 && !s.rope_q_rows.contains(rows[0]))
      s.rope_q_rows[rows[0]] = rope_kernel(shape, c.n_head, false, rows[0]);
    if (rows[1].stride != 0 && !s.rope_k_rows.contains(rows[1]))
      s.rope_k_rows[rows[1]] = rope_kernel(shape, c.n_kv_head, true, rows[1]);
    if (rows[2].stride != 0 && !s.store_v_rows.contains(rows[2]))
      s.store_v_rows[rows[2]] = cache_store_kernel(shape, rows[2]);
  }
  const matmul_form form = matmul_form_for(dev);
  // On GPUs a full chunk takes kernels fixed to its length (linear::chunk, chunk_attention).
  const bool fixed_chunks = form == matmul_form::gpu && chunk_size_ % prefill_token_lanes == 0;
  // A GPU's decode computes attention's exponentials where it uses them (from_scores), one
  // dispatch fewer a layer; its full chunks keep the exp pass: their weighted sum, scheduled two
  // work-items to a walk, took 20 us a layer with the exps inline against 4.9 (the 1B's chunk of
  // 32, modeled on an RX 7900 XTX).
  const bool exps_inline = form == matmul_form::gpu;
  s.attention = attention_passes(shape, exps_inline);
  if (fixed_chunks) {
    attention_shape full = shape;
    full.tokens = T;
    s.chunk_attention = attention_passes(full, false);
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
                             activation_byte_kernel(c.dim, var_head_rows)};
    for (std::int64_t width : {c.dim, qw, c.ffn})
      if (width % block == 0)
        s.act_quant[{width, block}] = {activation_scale_kernel(width, var_tokens, -1, block),
                                       activation_quant_kernel(width, var_tokens, -1, block, bytes),
                                       activation_sum_kernel(width, var_tokens, block, bytes),
                                       activation_byte_kernel(width, var_tokens)};
    if (c.dim % block == 0) {
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
    graph& step = s.step_graphs[{sequence, T, which}];
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

void transformer::run_layer(std::size_t index) {
  state& s = *s_;
  struct in_layer {  // the profile's launch observer is told which layer a launch is in
    int& at;
    in_layer(int& a, std::size_t i) : at(a) { at = int(i); }
    ~in_layer() { at = -1; }
  } marking(s.layer, index);
  const layer_weights& w = weights_.layers[index];
  layer_kernels& k = s.layers[index];
  // Where the queries, keys and values are: their own buffers, or rows of the stacked projections'.
  const std::array<head_rows, 3> rows = projection_rows(w, config_.n_head * config_.head_dim,
                                                        config_.n_kv_head * config_.head_dim);
  // The kernel a matmul runs in this forward. A decode batch computes each row as the one-token
  // kernel does: with matmul_batch_kernel for a multiple of its token lanes, else with the
  // one-token kernel itself.
  auto pick = [&](const linear& l) -> const launchable& {
    const std::int64_t tokens = s.vars[var_tokens];
    const bool batch = !s.batch_sequences.empty();
    const bool tiled = tokens >= prefill_token_lanes && tokens % prefill_token_lanes == 0;
    if (tiled && !batch && tokens == chunk_size_ && !l.chunk.kernel.nodes.empty()) return l.chunk;
    return tiled ? (batch ? l.batch : l.prefill) : l.kernel;
  };
  // What the rounded inputs of `readers` in block size `block` must carry this forward.
  // Readers without a weight are the layer's unused kernels (projections stacked, or the stack).
  auto needs_of = [&](std::int64_t block, std::initializer_list<const linear*> readers) {
    activation_needs n;
    for (const linear* l : readers) {
      if (l->w == nullptr || !uses_int8_activations(*l->w) || activation_block_for(*l->w) != block) continue;
      const bool tiles = reads_tiles(pick(*l));
      n.wanted = true;
      n.sums = n.sums || (tiles ? tiles_take_sums(*l->w) : pick(*l).reads_sums);
      n.bytes = n.bytes || (tiles && reads_activation_bytes(*l->w));
    }
    return n;
  };
  auto matmul = [&](const linear& l, const buffer& out, const buffer& in, const buffer& residual = {},
                    const std::optional<weight>& bias = std::nullopt) {
    const launchable& kernel = pick(l);
    const std::int64_t weight = l.w->rows * l.w->row_bytes;
    if (uses_int8_activations(*l.w)) {
      const rounded_input& r = s.rounded.at(activation_block_for(*l.w));
      const bool bytes = reads_tiles(kernel) && reads_activation_bytes(*l.w);
      const buffer all[] = {out, l.w->data, bytes ? r.xb : r.xq, residual.data() ? residual : out, bias ? bias->data : out,
                            r.xs, r.xsum, l.w->tiles.data() ? l.w->tiles : out};
      s.run(dev_, kernel, std::span<const buffer>(all, std::size_t(kernel.kernel.slot_count)), weight);
    } else if (bias) s.run(dev_, kernel, {out, l.w->data, in, residual.data() ? residual : out, bias->data}, weight);
    else if (residual.data()) s.run(dev_, kernel, {out, l.w->data, in, residual}, weight);
    else s.run(dev_, kernel, {out, l.w->data, in}, weight);
  };
  // Rounds `in` (`width` wide) to 8 bits in s.rounded, in the block sizes the matmuls reading it take.
  auto quantize = [&](const buffer& in, std::int64_t width, std::initializer_list<const linear*> readers) {
    for (std::int64_t block : {std::int64_t(32), std::int64_t(256)}) {
      const activation_needs needs = needs_of(block, readers);
      if (needs.wanted) s.round_input(dev_, s.act_quant.at({width, block}), s.rounded.at(block), in, block, needs);
    }
  };
  // The matmul inputs `readers` want from an elementwise result: rounded to 8 bits by the
  // plans `round_scale`/`round` (the result recomputed in each, never stored), and as floats
  // by `floats` into `to` when a reader takes floats. `named` are the plans' inputs.
  auto matmul_inputs = [&](const std::map<std::int64_t, planned>& round_scale,
                           const std::map<std::int64_t, planned>& round, const planned& floats, const buffer& to,
                           std::int64_t width, std::initializer_list<named_buffer> named,
                           std::initializer_list<const linear*> readers) {
    std::vector<named_buffer> with(named);
    bool float_reader = false;
    for (const linear* l : readers) float_reader = float_reader || (l->w != nullptr && !uses_int8_activations(*l->w));
    for (std::int64_t block : {std::int64_t(32), std::int64_t(256)}) {
      const activation_needs needs = needs_of(block, readers);
      if (!needs.wanted) continue;
      const rounded_input& r = s.rounded.at(block);
      with.resize(named.size());
      with.push_back({"out", r.xs});
      s.run(dev_, round_scale.at(block), with);
      with.back() = {"xs", r.xs};
      with.push_back({"out", r.xq});
      s.run(dev_, round.at(block), with);
      s.round_extras(dev_, s.act_quant.at({width, block}), r, block, needs);
    }
    if (!float_reader) return;
    with.assign(named);
    with.push_back({"out", to});
    s.run(dev_, floats, with);
  };
  // attention block: x2 = x + Wo · attention(rope(Wq·n), rope(Wk·n), Wv·n), n = norm(x)
  s.run(dev_, s.norm_scale, {{"x", s.x}, {"eps", s.eps}, {"out", s.scale}});
  matmul_inputs(s.norm_round_scale, s.norm_round, s.norm_apply, s.hn, config_.dim,
                {{"x", s.x}, {"s", s.scale}, {"w", w.attn_norm.data}}, {&k.q, &k.k, &k.v, &k.stacked});
  if (w.stacked) matmul(k.stacked, s.stacked, s.hn, {}, w.stacked->bias);
  if (k.q.w) matmul(k.q, s.q, s.hn, {}, w.bq);
  if (k.k.w) matmul(k.k, s.k, s.hn, {}, w.bk);
  if (k.v.w) matmul(k.v, s.v, s.hn, {}, w.bv);
  buffer kk = rows[1].stride != 0 ? s.stacked : s.k;
  if (w.q_norm) {  // qwen3: RMSNorm of each head vector before RoPE (for queries, in RoPE's kernel)
    s.run(dev_, s.head_scale_q, {{"x", s.q}, {"eps", s.eps}, {"out", s.scale}});
    s.run(dev_, s.rope_q, {{"x", s.q}, {"s", s.scale}, {"w", w.q_norm->data}, {"cos", s.rope_cos}, {"sin", s.rope_sin},
                           {"out", s.qr}});
    s.run(dev_, s.head_scale_k, {{"x", s.k}, {"eps", s.eps}, {"out", s.scale}});
    s.run(dev_, s.head_apply_k, {{"x", s.k}, {"s", s.scale}, {"w", w.k_norm->data}, {"out", s.kn}});
    kk = s.kn;
  } else {
    if (rows[0].stride != 0) s.run(dev_, s.rope_q_rows.at(rows[0]), {s.qr, s.stacked, s.rope_cos, s.rope_sin});
    else s.run(dev_, s.rope_q, {{"x", s.q}, {"cos", s.rope_cos}, {"sin", s.rope_sin}, {"out", s.qr}});
  }
  // Attention on one sequence's cache: its keys and values go in at their positions, and its
  // queries read the cache up to there.
  auto attend = [&](int seq, const buffer& keys, const buffer& values, const buffer& queries, const buffer& out,
                    const buffer& cos, const buffer& sin) {
    const launchable& rope_k = rows[1].stride != 0 ? s.rope_k_rows.at(rows[1]) : s.rope_k;
    const launchable& store_v = rows[2].stride != 0 ? s.store_v_rows.at(rows[2]) : s.store_v;
    s.run(dev_, rope_k, {k.k_cache[std::size_t(seq)], keys, cos, sin});
    s.run(dev_, store_v, {k.v_cache[std::size_t(seq)], values});
    const bool full = !s.chunk_attention.attend.kernel.nodes.empty() && s.vars[var_tokens] == chunk_size_;
    const attention_passes& a = full ? s.chunk_attention : s.attention;
    s.run(dev_, a.scores, {s.scores, queries, k.k_cache[std::size_t(seq)]});
    s.run(dev_, a.max, {s.row_max, s.scores});
    if (a.from_scores()) {
      s.run(dev_, a.sum, {s.row_sum, s.scores, s.row_max});
      s.run(dev_, a.attend, {out, s.scores, k.v_cache[std::size_t(seq)], s.row_sum, s.row_max});
    } else {
      s.run(dev_, a.exp, {s.probs, s.scores, s.row_max});
      s.run(dev_, a.sum, {s.row_sum, s.probs});
      s.run(dev_, a.attend, {out, s.probs, k.v_cache[std::size_t(seq)], s.row_sum});
    }
  };
  if (s.batch_sequences.empty()) {
    attend(s.sequence, kk, rows[2].stride != 0 ? s.stacked : s.v, s.qr, s.att, s.rope_cos, s.rope_sin);
  } else {  // decode_batch: row i alone, as a one-token forward of its sequence would run it
    const launch_values batch = s.vars;
    const row_views& r = *s.rows;
    for (std::size_t i = 0; i < s.batch_sequences.size(); ++i) {
      s.vars = {1, s.batch_positions[i], 1, 0};
      attend(s.batch_sequences[i], w.q_norm ? r.kn[i] : r.k[i], r.v[i], r.qr[i], r.att[i], r.cos[i], r.sin[i]);
    }
    s.vars = batch;
  }
  quantize(s.att, config_.n_head * config_.head_dim, {&k.o});
  matmul(k.o, s.x2, s.att, s.x);
  // FFN block: x = x2 + down(silu(gate·n) * up·n), n = norm(x2)
  s.run(dev_, s.norm_scale, {{"x", s.x2}, {"eps", s.eps}, {"out", s.scale}});
  matmul_inputs(s.norm_round_scale, s.norm_round, s.norm_apply, s.hn, config_.dim,
                {{"x", s.x2}, {"s", s.scale}, {"w", w.ffn_norm.data}}, {&k.gate, &k.up});
  matmul(k.gate, s.g, s.hn);
  matmul(k.up, s.u, s.hn);
  // On the CPU SwiGLU is stored, then rounded: fusing it into the rounding like the norm computes
  // silu's exp once per rounding kernel, and exp2 is one scalar call per element in the codegen,
  // so the fused pair measured slower (-v) than this one extra launch. On a GPU the exps are
  // cheap beside a dispatch (2 us modeled: drivers/emu/shader/modeled_cost.hpp): fused.
  if (!s.swiglu_round.empty() && uses_int8_activations(*k.down.w)) {
    matmul_inputs(s.swiglu_round_scale, s.swiglu_round, s.swiglu, s.ff, config_.ffn, {{"g", s.g}, {"u", s.u}},
                  {&k.down});
  } else {
    s.run(dev_, s.swiglu, {{"g", s.g}, {"u", s.u}, {"out", s.ff}});
    quantize(s.ff, config_.ffn, {&k.down});
  }
  matmul(k.down, s.x, s.ff, s.x2);
}

void transformer::run_head() {
  state& s = *s_;
  s.run(dev_, s.norm_scale, {{"x", s.x}, {"eps", s.eps}, {"out", s.scale}});
  s.run(dev_, s.norm_apply, {{"x", s.x}, {"s", s.scale}, {"w", weights_.output_norm.data}, {"out", s.hn}});
  const std::int64_t head_bytes = s.output.w->rows * s.output.w->row_bytes;
  if (uses_int8_activations(*s.output.w)) {
    const std::int64_t block = activation_block_for(*s.output.w);
    const rounded_input& r = s.rounded.at(block);
    // Head rows in token lanes (a decode batch's, or every position's logits) where the head
    // decodes from tiles: each row as the one-row kernel computes it, the weights read once.
    const std::int64_t rows = s.vars[var_head_rows];
    const bool lanes = decodes_from_tiles(*s.output.w) && rows % prefill_token_lanes == 0;
    const launchable& kernel = lanes ? s.output.batch : s.output.kernel;
    const bool tiles = reads_tiles(kernel), bytes = tiles && reads_activation_bytes(*s.output.w);
    s.round_input(dev_, s.head_quant.at(block), r, s.hn, block,
                  {true, tiles ? tiles_take_sums(*s.output.w) : kernel.reads_sums, bytes});
    const buffer all[] = {s.logits, s.output.w->data, bytes ? r.xb : r.xq, s.logits, s.logits, r.xs, r.xsum,
                          s.output.w->tiles.data() ? s.output.w->tiles : s.logits};
    s.run(dev_, kernel, std::span<const buffer>(all, std::size_t(kernel.kernel.slot_count)), head_bytes);
  } else {
    s.run(dev_, s.output.kernel, {s.logits, s.output.w->data, s.hn}, head_bytes);
  }
}

}  // namespace tg::model
