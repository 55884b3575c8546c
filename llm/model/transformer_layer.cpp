// transformer_layer.cpp: the order a step's kernels run in: each layer's attention block and
// feed-forward block, then the head, with the rounding of each matmul input (transformer.cpp
// builds the kernels and buffers; transformer_state.hpp holds them).
#include <array>
#include <optional>
#include <vector>

#include "llm/model/transformer_state.hpp"

namespace tg::model {

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
      n.bytes = n.bytes || s.takes_byte_copy(pick(*l));
      n.sums8 = n.sums8 || pick(*l).reads_sums8;
    }
    return n;
  };
  // The buffers of `kernel`, `l`'s matmul, one per slot, into `to`; how many.
  auto matmul_slots = [&](const linear& l, const launchable& kernel, const buffer& out, const buffer& in,
                          const buffer& residual, const std::optional<weight>& bias, std::span<buffer> to) {
    std::size_t n = 0;
    auto add = [&](std::initializer_list<buffer> all, std::size_t count) {
      for (auto it = all.begin(); n < count; ++it) to[n++] = *it;
    };
    const buffer& res = residual.data() ? residual : out;
    if (uses_int8_activations(*l.w)) {
      const rounded_input& r = s.rounded.at(activation_block_for(*l.w));
      const bool bytes = s.takes_byte_copy(kernel);
      add({out, l.w->data, bytes ? r.xb : r.xq, res, bias ? bias->data : out, r.xs, r.xsum,
           l.w->tiles.data() ? l.w->tiles : out, l.w->decode_tiles.data() ? l.w->decode_tiles : out,
           r.xsum8.data() ? r.xsum8 : out},
          std::size_t(kernel.kernel.slot_count));
    } else if (bias) add({out, l.w->data, in, res, bias->data}, 5);
    else if (residual.data()) add({out, l.w->data, in, residual}, 4);
    else add({out, l.w->data, in}, 3);
    return n;
  };
  auto matmul = [&](const linear& l, const buffer& out, const buffer& in, const buffer& residual = {},
                    const std::optional<weight>& bias = std::nullopt) {
    const launchable& kernel = pick(l);
    std::array<buffer, 10> slots;
    const std::size_t n = matmul_slots(l, kernel, out, in, residual, bias, slots);
    s.run(dev_, kernel, std::span<const buffer>(slots.data(), n), l.w->rows * l.w->row_bytes);
  };
  // Matmuls of s.hn, none reading another's output: on GPUs a one-token step launches them as
  // one where there are several (matmuls_together: each dispatch costs time its bytes do not pay for).
  struct matmul_call {
    const linear* l;
    const buffer* out;
    const std::optional<weight>* bias;
  };
  const std::optional<weight> no_bias;
  auto matmuls_of_one_input = [&](std::span<const matmul_call> calls, matmuls_together& together) {
    const bool fuse = s.fuse_matmuls && calls.size() > 1 && s.vars[var_tokens] == 1 && s.batch_sequences.empty();
    if (fuse && !together.kernel) {
      std::vector<const ast::kernel*> parts;
      for (const matmul_call& c : calls) {
        parts.push_back(&pick(*c.l).kernel);
        together.name += (together.name.empty() ? "" : " + ") + kernel_name(parts.back()->nodes, parts.back()->global_ranges);
      }
      together.kernel = dev_.prepare_fused(parts, s.vars);
    }
    if (!fuse || !*together.kernel) {
      for (const matmul_call& c : calls) matmul(*c.l, *c.out, s.hn, {}, *c.bias);
      return;
    }
    std::array<buffer, 32> slots;
    std::size_t n = 0;
    std::int64_t weight_bytes = 0;
    for (const matmul_call& c : calls) {
      n += matmul_slots(*c.l, pick(*c.l), *c.out, s.hn, {}, *c.bias, std::span(slots).subspan(n));
      weight_bytes += c.l->w->rows * c.l->w->row_bytes;
    }
    s.run(dev_, *together.kernel, std::span<const buffer>(slots.data(), n), weight_bytes, [&] { return together.name; });
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
  // scaled_block: the block size whose scales are already in s.rounded (norm_scale_round).
  auto matmul_inputs = [&](const std::map<std::int64_t, planned>& round_scale,
                           const std::map<std::int64_t, planned>& round, const planned& floats, const buffer& to,
                           std::int64_t width, std::initializer_list<named_buffer> named,
                           std::initializer_list<const linear*> readers, std::int64_t scaled_block = 0) {
    std::vector<named_buffer> with(named);
    bool float_reader = false;
    for (const linear* l : readers) float_reader = float_reader || (l->w != nullptr && !uses_int8_activations(*l->w));
    for (std::int64_t block : {std::int64_t(32), std::int64_t(256)}) {
      const activation_needs needs = needs_of(block, readers);
      if (!needs.wanted) continue;
      const rounded_input& r = s.rounded.at(block);
      with.resize(named.size());
      with.push_back({"out", r.xs});
      if (block != scaled_block) s.run(dev_, round_scale.at(block), with);
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
  // RMSNorm of x with weight `gamma` into what `readers` take: its row scale first, on GPUs in
  // the kernel of the first block scales the readers want (norm_scale_round).
  auto normed_inputs = [&](const buffer& x, const weight& gamma, std::initializer_list<const linear*> readers) {
    std::int64_t scaled = 0;
    for (std::int64_t block : {std::int64_t(32), std::int64_t(256)})
      if (scaled == 0 && s.norm_scale_round.contains(block) && needs_of(block, readers).wanted) scaled = block;
    if (scaled != 0) s.run(dev_, s.norm_scale_round.at(scaled), {s.rounded.at(scaled).xs, s.scale, x, gamma.data, s.eps});
    else s.run(dev_, s.norm_scale, {{"x", x}, {"eps", s.eps}, {"out", s.scale}});
    matmul_inputs(s.norm_round_scale, s.norm_round, s.norm_apply, s.hn, config_.dim,
                  {{"x", x}, {"s", s.scale}, {"w", gamma.data}}, readers, scaled);
  };
  // attention block: x2 = x + Wo · attention(rope(Wq·n), rope(Wk·n), Wv·n), n = norm(x)
  normed_inputs(s.x, w.attn_norm, {&k.q, &k.k, &k.v, &k.stacked});
  // The projections: the stack's matmul and those of the projections outside it (the types of a
  // layer's attn_q, attn_k, attn_v may differ: Q4_K_M's "more bits" layers stack Q4_K q and k,
  // and their Q6_K attn_v alone would pay a dispatch for 3.4 MB in an 8B model).
  std::array<matmul_call, 4> projections;
  std::size_t n_projections = 0;
  if (w.stacked) projections[n_projections++] = {&k.stacked, &s.stacked, &w.stacked->bias};
  if (k.q.w) projections[n_projections++] = {&k.q, &s.q, &w.bq};
  if (k.k.w) projections[n_projections++] = {&k.k, &s.k, &w.bk};
  if (k.v.w) projections[n_projections++] = {&k.v, &s.v, &w.bv};
  matmuls_of_one_input(std::span(projections.data(), n_projections), k.projections);
  buffer kk = rows[1].stride != 0 ? s.stacked : s.k;
  const buffer& vv = rows[2].stride != 0 ? s.stacked : s.v;
  // On GPUs one kernel ropes the queries and keys and stores the values (not for qwen3's normed
  // heads, nor a batch's rows, each at its own position in its own cache).
  const auto one_rope = s.rope_store.find(rows);
  const bool rope_in_one = !w.q_norm && s.batch_sequences.empty() && one_rope != s.rope_store.end();
  if (rope_in_one) {
    s.run(dev_, one_rope->second, {s.qr, k.k_cache[std::size_t(s.sequence)], k.v_cache[std::size_t(s.sequence)],
                                   rows[0].stride != 0 ? s.stacked : s.q, kk, vv, s.rope_cos, s.rope_sin});
  } else if (w.q_norm) {  // qwen3: RMSNorm of each head vector before RoPE (for queries, in RoPE's kernel)
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
    if (!rope_in_one) {
      const launchable& rope_k = rows[1].stride != 0 ? s.rope_k_rows.at(rows[1]) : s.rope_k;
      const launchable& store_v = rows[2].stride != 0 ? s.store_v_rows.at(rows[2]) : s.store_v;
      s.run(dev_, rope_k, {k.k_cache[std::size_t(seq)], keys, cos, sin});
      s.run(dev_, store_v, {k.v_cache[std::size_t(seq)], values});
    }
    const attention_passes& a = s.attention_for(s.vars[var_start_pos], s.vars[var_tokens], chunk_size_);
    s.run(dev_, a.scores, {s.scores, queries, k.k_cache[std::size_t(seq)]});
    if (a.from == softmax_from::scores) {
      s.run(dev_, a.attend, {out, s.scores, k.v_cache[std::size_t(seq)]});
      return;
    }
    s.run(dev_, a.max, {s.row_max, s.scores});
    s.run(dev_, a.exp, {s.probs, s.scores, s.row_max});
    s.run(dev_, a.sum, {s.row_sum, s.probs});
    if (a.join.kernel.nodes.empty()) {
      s.run(dev_, a.attend, {out, s.probs, k.v_cache[std::size_t(seq)], s.row_sum});
    } else {
      s.run(dev_, a.attend, {s.attend_runs, s.probs, k.v_cache[std::size_t(seq)]});
      s.run(dev_, a.join, {out, s.attend_runs, s.row_sum});
    }
  };
  if (s.batch_sequences.empty()) {
    attend(s.sequence, kk, vv, s.qr, s.att, s.rope_cos, s.rope_sin);
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
  normed_inputs(s.x2, w.ffn_norm, {&k.gate, &k.up});
  const std::array<matmul_call, 2> gate_up = {{{&k.gate, &s.g, &no_bias}, {&k.up, &s.u, &no_bias}}};
  matmuls_of_one_input(gate_up, k.gate_up);
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
    const bool tiles = reads_tiles(kernel), bytes = s.takes_byte_copy(kernel);
    s.round_input(dev_, s.head_quant.at(block), r, s.hn, block,
                  {true, tiles ? tiles_take_sums(*s.output.w) : kernel.reads_sums, bytes, kernel.reads_sums8});
    const buffer all[] = {s.logits, s.output.w->data, bytes ? r.xb : r.xq, s.logits, s.logits, r.xs, r.xsum,
                          s.output.w->tiles.data() ? s.output.w->tiles : s.logits,
                          s.output.w->decode_tiles.data() ? s.output.w->decode_tiles : s.logits,
                          r.xsum8.data() ? r.xsum8 : s.logits};
    s.run(dev_, kernel, std::span<const buffer>(all, std::size_t(kernel.kernel.slot_count)), head_bytes);
  } else {
    s.run(dev_, s.output.kernel, {s.logits, s.output.w->data, s.hn}, head_bytes);
  }
}

}  // namespace tg::model
