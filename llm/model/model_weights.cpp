// model_weights.cpp: loading and shape-checking the tensors of gguf-py/gguf/constants.py (TENSOR_NAMES).
#include "llm/model/model_weights.hpp"

#include "llm/model/matmul_tiles.hpp"

#include <fstream>
#include <string>

#include <tg/core/error.hpp>
#include <tg/log.hpp>

#include "llm/gguf/gguf_file.hpp"

namespace tg::model {
namespace {

// 1-D tensors (norms, biases) must be F32, as llama.cpp always writes them.
weight load_vector(device& dev, const gguf::file& f, const std::string& name, std::int64_t size) {
  weight w = load_weight(dev, f, name, 1, size);
  if (w.type != gguf::tensor_type::f32)
    throw usage_error(str(f.name(), ": tensor ", name, " has type ", gguf::tensor_type_name(w.type), ", expected F32"));
  return w;
}

std::optional<weight> find_vector(device& dev, const gguf::file& f, const std::string& name, std::int64_t size) {
  if (f.find_tensor(name) == nullptr) return std::nullopt;
  return load_vector(dev, f, name, size);
}

// Memory the system can still give, from /proc/meminfo's MemAvailable; 0 when unknown.
std::uint64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

// Prefill reads the layer matrices as row tiles where the device has a tile form
// (matmul_tiles.hpp); decode keeps streaming the mapped file bytes. The tiles are a second
// copy, up to twice the file's size for a K-quant file, so they are made only when they take
// at most half the memory still available; otherwise prefill reads the file's blocks
// (correct, about half as fast) and the log says so, rather than the load running the
// machine out of memory.
// The output head gets tiles too where it would decode from them (Q8_0: matmul_tiles.hpp's
// decodes_from_tiles), so that a decode batch reads its weights once for four sequences.
void add_prefill_tiles(device& dev, const gguf::file& f, model_weights& m) {
  const std::int64_t rows = tile_rows_for(dev);
  if (rows == 0) return;
  const bool head = tiles_fit_file_bytes(m.output, rows);
  std::uint64_t total = head ? tile_bytes(m.output, rows) : 0;
  for (layer_weights& l : m.layers)
    for (weight* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) total += tile_bytes(*w, rows);
  const std::uint64_t available = available_memory_bytes();
  if (available > 0 && total > available / 2) {
    log(log_level::warning, str(f.name(), ": prefill tiles skipped: they would take ", total >> 20, " MiB with ",
                                available >> 20, " MiB of memory available; prefill reads the file's blocks instead (slower)"));
    return;
  }
  for (layer_weights& l : m.layers)
    for (weight* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down})
      if (has_tiles(*w)) add_tiles(dev, *w, rows);
  if (head) add_tiles(dev, m.output, rows);
}

}  // namespace

std::uint64_t model_weights::bytes_per_token() const {
  auto all = [](const weight& w) { return std::uint64_t(w.rows * w.row_bytes); };
  std::uint64_t total = std::uint64_t(token_embd.row_bytes) + all(output_norm) + all(output);
  for (const layer_weights& l : layers) {
    for (const weight* w : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.gate, &l.up, &l.down})
      total += all(*w);
    for (const auto* w : {&l.bq, &l.bk, &l.bv, &l.q_norm, &l.k_norm})
      if (*w) total += all(**w);
  }
  return total;
}

model_weights load_model_weights(device& dev, const gguf::file& f, const model_config& c) {
  model_weights m;
  const std::int64_t q_width = c.n_head * c.head_dim, kv_width = c.n_kv_head * c.head_dim;
  m.token_embd = load_weight(dev, f, "token_embd.weight", c.vocab, c.dim);
  m.output_norm = load_vector(dev, f, "output_norm.weight", c.dim);
  m.output = c.tied_output ? m.token_embd : load_weight(dev, f, "output.weight", c.vocab, c.dim);
  m.rope_freqs = find_vector(dev, f, "rope_freqs.weight", c.rope_dim / 2);
  for (std::int64_t i = 0; i < c.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    layer_weights l;
    l.attn_norm = load_vector(dev, f, p + "attn_norm.weight", c.dim);
    l.wq = load_weight(dev, f, p + "attn_q.weight", q_width, c.dim);
    l.wk = load_weight(dev, f, p + "attn_k.weight", kv_width, c.dim);
    l.wv = load_weight(dev, f, p + "attn_v.weight", kv_width, c.dim);
    l.wo = load_weight(dev, f, p + "attn_output.weight", c.dim, q_width);
    l.ffn_norm = load_vector(dev, f, p + "ffn_norm.weight", c.dim);
    l.gate = load_weight(dev, f, p + "ffn_gate.weight", c.ffn, c.dim);
    l.up = load_weight(dev, f, p + "ffn_up.weight", c.ffn, c.dim);
    l.down = load_weight(dev, f, p + "ffn_down.weight", c.dim, c.ffn);
    if (c.qkv_bias) {
      l.bq = load_vector(dev, f, p + "attn_q.bias", q_width);
      l.bk = load_vector(dev, f, p + "attn_k.bias", kv_width);
      l.bv = load_vector(dev, f, p + "attn_v.bias", kv_width);
    }
    if (c.qk_norm) {
      l.q_norm = load_vector(dev, f, p + "attn_q_norm.weight", c.head_dim);
      l.k_norm = load_vector(dev, f, p + "attn_k_norm.weight", c.head_dim);
    }
    m.layers.push_back(std::move(l));
  }
  add_prefill_tiles(dev, f, m);
  return m;
}

}  // namespace tg::model
