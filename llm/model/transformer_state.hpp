// transformer_state.hpp: what a transformer holds between calls (private to transformer.cpp and
// transformer_layer.cpp): its kernels as launchables, its activation buffers and what the
// forward pass needs to launch them; the order they run in is transformer_layer.cpp's.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <tg/device.hpp>
#include <tg/graph.hpp>

#include "llm/model/activation_kernels.hpp"
#include "llm/model/attention_kernels.hpp"
#include "llm/model/launch_vars.hpp"
#include "llm/model/layer_plans.hpp"
#include "llm/model/linear_kernels.hpp"
#include "llm/model/matmul_tiles.hpp"
#include "llm/model/model_weights.hpp"
#include "llm/model/transformer.hpp"

namespace tg::model {

// A kernel and, from its first launch on, its compiled program, so that the ~26 launches of
// a layer each token skip the device's cache lookup (hashing the whole AST).
struct launchable {
  ast::kernel kernel;
  mutable prepared_kernel prepared;
  bool reads_sums = false;  // a matmul's: reads_activation_sums, asked once rather than every step
  bool reads_bytes = false;  // a matmul's: reads_activation_bytes
  bool reads_sums8 = false;  // a matmul's: reads_activation_sums8
  launchable() = default;
  launchable(ast::kernel k)  // implicit
      : kernel(std::move(k)),
        reads_sums(reads_activation_sums(kernel)),
        reads_bytes(reads_activation_bytes(kernel)),
        reads_sums8(reads_activation_sums8(kernel)) {}
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

// On GPUs, the longest context at which a decode step's attention runs in one kernel after the
// scores (state::short_attention; transformer.cpp says why).
constexpr std::int64_t short_attention_context = 1024;

// Attention's passes after RoPE and the cache write (attention_kernels.hpp), for one shape.
struct attention_passes {
  launchable scores, max, exp, sum, attend, join;
  softmax_from from = softmax_from::probabilities;
  attention_passes() = default;
  // What the weighted sum reads (attention_kernels.hpp: softmax_from), and so which passes run
  // before it: max, exp and sum; or none (a GPU's decode up to short_attention_context: the
  // weighted sum finds the row's max and sum itself). With `runs`
  // (the probabilities only), the weighted sum is attend_runs_kernel's runs over the
  // context, and `join` adds them up.
  attention_passes(const attention_shape& s, softmax_from f, std::int64_t runs = 0)
      : scores(scores_kernel(s)), attend(runs > 0 ? attend_runs_kernel(s, runs) : attend_kernel(s, f)), from(f) {
    if (runs > 0) join = attend_join_kernel(s, runs);
    if (f == softmax_from::scores) return;
    max = softmax_max_kernel(s);
    exp = softmax_exp_kernel(s);
    sum = softmax_sum_kernel(s);
  }
};

// Whether a matmul kernel reads a weight's tiles (matmul_tiles.hpp: slot 7), not its file bytes.
inline bool reads_tiles(const launchable& k) { return k.kernel.slot_count > tiles_slot; }

// Where a layer's queries, keys and values lie in the stacked projections' output (stride 0: in
// their own buffers), qw and kvw wide.
inline std::array<head_rows, 3> projection_rows(const layer_weights& l, std::int64_t qw, std::int64_t kvw) {
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
  launchable sum8;  // 256-value blocks: the per-8 sums for Q6_K's decode tiles (activation_sum8_kernel)
};

// What the matmuls reading a rounded input take beside its int16 values and scales.
struct activation_needs {
  bool wanted = false, sums = false, bytes = false, sums8 = false;
};

// Where an input rounded to 8 bits lives: int16 values, scales, per-32 sums, on the CPU the
// values again as int8 for the kernels that take quads (VNNI tiles, decode quads), and for
// 256-value blocks the per-8 sums Q6_K's decode tiles take.
struct rounded_input {
  buffer xq, xs, xsum, xb, xsum8;
};

// Matmuls reading one input, none another's output, launched as one (device::prepare_fused):
// made at the first one-token step; `kernel` empty where the device does not fuse them. `name`
// names the launch in profiles (the parts' names joined by " + ").
struct matmuls_together {
  std::optional<prepared_kernel> kernel;
  std::string name;
};

struct layer_kernels {
  linear q, k, v, o, gate, up, down;
  linear stacked;  // the layer's stacked projections (layer_weights::stacked); q, k, v then unused where stacked
  // On GPUs, a one-token step's matmuls that read one input as one launch where there are
  // several: the projections (the stack's and those outside it), and gate with up.
  matmuls_together projections, gate_up;
  std::vector<buffer> k_cache, v_cache;  // one per sequence
};

// Row t of an activation buffer as a buffer of its own, borrowed in place (no copy), so that
// attention can run on one sequence's row of a batch with the one-token kernels.
struct row_views {
  std::vector<buffer> qr, k, kn, v, att, cos, sin;
};

struct transformer::state {
  // Activations, sized for a full chunk.
  buffer x, x2, hn, q, k, v, kn, qr, scores, probs, row_max, row_sum, attend_runs, att, g, u, ff, scale, logits, tokens;
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
  // On GPUs, the three in one kernel (attention_kernels.hpp: rope_store_kernel), by the rows of
  // queries, keys and values; empty elsewhere.
  std::map<std::array<head_rows, 3>, launchable> rope_store;
  attention_passes attention;
  // On GPUs, a decode step's up to short_attention_context (empty elsewhere).
  attention_passes short_attention;
  // On GPUs, the passes of a full chunk (attention_shape::tokens at the chunk size), as
  // linear::chunk is for its matmuls; empty elsewhere.
  attention_passes chunk_attention;
  // And past short_attention_context (attention_shape::long_context), where the weighted sum's walk
  // is split wider; empty elsewhere.
  attention_passes long_chunk_attention;
  planned norm_scale, norm_apply, head_scale_q, head_scale_k, head_apply_k, rope_q, swiglu;
  // RMSNorm fused into the 8-bit rounding of its output, by block size; on GPUs SwiGLU too
  // (empty elsewhere).
  std::map<std::int64_t, planned> norm_round_scale, norm_round, swiglu_round_scale, swiglu_round;
  // On GPUs, the norm's row scale and its rounding's block scales in one kernel, by block size
  // (activation_kernels.hpp: norm_scale_round_kernel); empty elsewhere.
  std::map<std::int64_t, launchable> norm_scale_round;
  std::vector<buffer> slots;  // scratch: a plan kernel's buffers
  bool fuse_matmuls = false;  // GPUs: a one-token step's matmuls of one input in one launch (matmuls_together)
  // GPUs round the activations to int8 themselves; the CPU to int16, with an int8 copy (xb) for
  // the kernels that read bytes (reads_bytes).
  bool rounds_to_bytes = false;
  // Whether matmul kernel k takes the int8 copy (xb) of a rounded input rather than xq itself.
  bool takes_byte_copy(const launchable& k) const { return !rounds_to_bytes && k.reads_bytes; }
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
  // By sequence, tokens, head, and the attention passes the step takes (attention_for).
  std::map<std::tuple<int, std::int64_t, head, const attention_passes*>, graph> step_graphs;
  bool short_decode(std::int64_t start_pos, std::int64_t tokens) const {
    return !short_attention.attend.kernel.nodes.empty() && tokens == 1 && start_pos + 1 <= short_attention_context;
  }
  // The passes a step of `tokens` from start_pos takes: a full chunk's (chunk_tokens, on GPUs),
  // past short_attention_context its long-context ones; a short decode step's; else the general ones.
  const attention_passes& attention_for(std::int64_t start_pos, std::int64_t tokens, std::int64_t chunk_tokens) const {
    if (!chunk_attention.attend.kernel.nodes.empty() && tokens == chunk_tokens)
      return start_pos + tokens > short_attention_context && !long_chunk_attention.attend.kernel.nodes.empty()
                 ? long_chunk_attention
                 : chunk_attention;
    return short_decode(start_pos, tokens) ? short_attention : attention;
  }
  graph_builder* capturing = nullptr;  // while capturing: where run() adds launches
  graph_var capture_pos;

  // weight_bytes: what a matmul's launch reads of its weight, for the profile's bandwidth.
  void run(device& dev, const launchable& k, std::initializer_list<buffer> buffers, std::int64_t weight_bytes = 0) {
    run(dev, k, std::span<const buffer>(buffers.begin(), buffers.size()), weight_bytes);
  }
  void run(device& dev, const launchable& k, std::span<const buffer> buffers, std::int64_t weight_bytes = 0) {
    if (!k.prepared) k.prepared = dev.prepare(k.kernel);
    run(dev, k.prepared, buffers, weight_bytes, [&] { return kernel_name(k.kernel.nodes, k.kernel.global_ranges); });
  }
  // A prepared kernel; `name()` names it in the profile.
  template <class Name>
  void run(device& dev, const prepared_kernel& p, std::span<const buffer> buffers, std::int64_t weight_bytes, Name name) {
    if (capturing) {
      const std::vector<graph_slot> slots(buffers.begin(), buffers.end());
      graph_value values[launch_var_count] = {vars[0], vars[1], vars[2], vars[3]};
      values[var_start_pos] = capture_pos;
      capturing->add(p, slots, values);
      return;
    }
    if (!profiling) {
      p.launch(buffers, vars);
      return;
    }
    if (!timer) timer = dev.impl().make_launch_timer();
    timer->start();
    p.launch(buffers, vars);
    timer->stop();
    const std::string kernel = name();
    auto& entry = profile[kernel];
    entry.launches += 1;
    entry.weight_bytes += double(weight_bytes);
    if (entry.form.empty()) entry.form = p.describe();
    timed.push_back(&entry);
    if (observer) observer(kernel, layer);
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
  // The per-32 sums, the int8 copy and the per-8 sums, where a reader of the rounded input takes them.
  void round_extras(device& dev, const activation_quant& k, const rounded_input& to, std::int64_t block,
                    const activation_needs& needs) {
    if (needs.sums) round_sums(dev, k, to, block);
    if (needs.bytes) run(dev, k.bytes, {to.xb, to.xq});
    if (needs.sums8) run(dev, k.sum8, {to.xsum8, to.xq});
  }
  void round_sums(device& dev, const activation_quant& k, const rounded_input& to, std::int64_t block) {
    if (block == activation_block) run(dev, k.sum, {to.xsum, to.xq, to.xs});
    else run(dev, k.sum, {to.xsum, to.xq});
  }
};

}  // namespace tg::model
