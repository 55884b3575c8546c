// model_weights.cpp: loading and shape-checking the tensors of gguf-py/gguf/constants.py (TENSOR_NAMES).
#include "llm/model/model_weights.hpp"

#include "llm/model/matmul_tiles.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <tg/core/error.hpp>
#include <tg/log.hpp>

#include "llm/gguf/gguf_file.hpp"

namespace tg::model {
namespace {

// 1-D tensors (norms, biases) must be F32, as llama.cpp always writes them.
weight describe_vector(const gguf::file& f, const std::string& name, std::int64_t size) {
  weight w = describe_weight(f, name, 1, size);
  if (w.type != gguf::tensor_type::f32)
    throw usage_error(str(f.name(), ": tensor ", name, " has type ", gguf::tensor_type_name(w.type), ", expected F32"));
  return w;
}
weight load_vector(device& dev, const gguf::file& f, const std::string& name, std::int64_t size) {
  describe_vector(f, name, size);
  return load_weight(dev, f, name, 1, size);
}

std::optional<weight> find_vector(device& dev, const gguf::file& f, const std::string& name, std::int64_t size) {
  if (f.find_tensor(name) == nullptr) return std::nullopt;
  return load_vector(dev, f, name, size);
}

// Memory the system can still give, from /proc/meminfo's MemAvailable; 0 when unknown.
// TG_MEMORY_AVAILABLE (bytes) stands in for it: to see how a load fits a smaller machine.
std::uint64_t available_memory_bytes() {
  if (const char* given = std::getenv("TG_MEMORY_AVAILABLE")) {
    char* end = nullptr;
    const unsigned long long bytes = std::strtoull(given, &end, 10);
    if (end == given || *end != '\0') throw usage_error(str("TG_MEMORY_AVAILABLE=", given, ": give a number of bytes"));
    return bytes;
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

// Prefill reads the layer matrices as row tiles where the device has a tile form
// (matmul_tiles.hpp); decode streams the mapped file bytes, or the tiles where they are no
// larger (matmul_tiles.hpp: decodes_from_tiles). The tiles are a second
// copy, up to twice the file's size for a K-quant file, so they are made only when they take
// at most half the memory still available; otherwise prefill reads the file's blocks
// (correct, about half as fast) and the log says so, rather than the load running the
// machine out of memory.
// The output head gets tiles too where it would decode from them (Q8_0, Q6_K: matmul_tiles.hpp's
// decodes_from_tiles), only those decode reads, so that a decode batch reads its weights once
// for four sequences.
void add_prefill_tiles(device& dev, const gguf::file& f, model_weights& m) {
  const std::int64_t rows = tile_rows_for(dev);
  if (rows == 0) return;
  auto quads = [&](const weight& w) { return tile_quads_for(dev, w.type); };
  const bool head = tiles_fit_file_bytes(m.output, rows, quads(m.output));
  std::uint64_t total = head ? tile_bytes(m.output, rows, quads(m.output), true) : 0;
  for (layer_weights& l : m.layers)
    for (weight* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) total += tile_bytes(*w, rows, quads(*w));
  const std::uint64_t available = available_memory_bytes();
  // Where they do not fit, decode's tiles alone for the weights that decode from tiles: about
  // the file's bytes, whose pages then leave (an 8B Q5_K_M file's full tiles take three times
  // its 5.7 GB), so decode keeps its speed while prefill reads the file's blocks.
  bool decode_only = false;
  if (available > 0 && total > available / 2) {
    std::uint64_t decode_total = head ? tile_bytes(m.output, rows, quads(m.output), true) : 0;
    for (layer_weights& l : m.layers)
      for (weight* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down})
        if (tiles_fit_file_bytes(*w, rows, quads(*w))) decode_total += tile_bytes(*w, rows, quads(*w), true);
    decode_only = decode_total <= available / 2;
    log(log_level::warning, str(f.name(), ": prefill tiles skipped: they would take ", total >> 20, " MiB with ",
                                available >> 20, " MiB of memory available; prefill reads the file's blocks instead (slower)",
                                decode_only ? str(", decode reads its tiles (", decode_total >> 20, " MiB)") : std::string()));
    if (!decode_only) return;
  }
  // A weight that decodes from its tiles never reads its file bytes again on a device that
  // reads them in place: they leave the process's resident memory (gguf::file::release), so a
  // Q8_0 model holds one copy of its weights, not two. (A tied head's bytes are the embedding
  // table's; the embedding pages back in the rows it gathers.)
  auto made = [&](weight& w, bool decode_only) {
    add_tiles(dev, w, rows, quads(w), decode_only);
    if (decodes_from_tiles(w) && dev.impl().reads_host_memory())
      f.release({static_cast<const std::byte*>(w.data.data()), std::size_t(w.rows * w.row_bytes)});
  };
  for (layer_weights& l : m.layers)
    for (weight* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down})
      if (decode_only ? tiles_fit_file_bytes(*w, rows, quads(*w)) : has_tiles(*w)) made(*w, decode_only);
  if (head) made(m.output, true);  // decode's tiles only: no prefill kernel reads the head
}


// Progress of the weights' upload to a device that copies them (a GPU: over PCIe or the USB
// bridge, minutes for a large model): a line at most every second, then one with the total
// time and MB/s. Where the device reads the mapped file in place (the CPU) nothing is copied
// and nothing is said.
class upload_progress {
 public:
  upload_progress(const device& dev, const gguf::file& f) : dev_(dev.name()), quiet_(dev.impl().reads_host_memory()) {
    for (const auto& t : f.tensors()) total_ += t.size_bytes;
  }
  void add(const weight& w) {
    done_ += std::uint64_t(w.rows * w.row_bytes);
    const auto now = clock::now();
    if (quiet_ || now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    log(log_level::info, str("uploading weights to ", dev_, ": ", 100 * done_ / std::max<std::uint64_t>(total_, 1), "% (",
                             done_ >> 20, " of ", total_ >> 20, " MiB, ", int(mb_per_second()), " MB/s)"));
  }
  void finish() const {
    if (quiet_) return;
    char line[160];
    std::snprintf(line, sizeof line, "uploaded %llu MiB of weights to %s in %.2f s (%.0f MB/s)",
                  static_cast<unsigned long long>(done_ >> 20), dev_.c_str(), seconds(), mb_per_second());
    log(log_level::info, line);
  }

 private:
  using clock = std::chrono::steady_clock;
  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }
  double mb_per_second() const { return double(done_) / 1e6 / std::max(seconds(), 1e-9); }
  std::string dev_;
  bool quiet_;
  std::uint64_t total_ = 0, done_ = 0;
  clock::time_point start_ = clock::now(), last_ = start_;
};

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
  upload_progress progress(dev, f);
  auto load = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
    weight w = load_weight(dev, f, name, rows, cols);
    progress.add(w);
    return w;
  };
  const std::int64_t q_width = c.n_head * c.head_dim, kv_width = c.n_kv_head * c.head_dim;
  // A GPU (a device that copies the weights) stacks a layer's projections (layer_weights::stacked).
  const bool stack_projections = !dev.impl().reads_host_memory() && !c.qk_norm;
  m.token_embd = load("token_embd.weight", c.vocab, c.dim);
  m.output_norm = load_vector(dev, f, "output_norm.weight", c.dim);
  m.output = c.tied_output ? m.token_embd : load("output.weight", c.vocab, c.dim);
  m.rope_freqs = find_vector(dev, f, "rope_freqs.weight", c.rope_dim / 2);
  for (std::int64_t i = 0; i < c.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    layer_weights l;
    l.attn_norm = load_vector(dev, f, p + "attn_norm.weight", c.dim);
    weight* projections[3] = {&l.wq, &l.wk, &l.wv};
    const char* names[3] = {"attn_q", "attn_k", "attn_v"};
    const std::int64_t widths[3] = {q_width, kv_width, kv_width};
    int first = 0, count = 0;  // the run of projections to stack (layer_weights::stacked)
    if (stack_projections) {
      for (int j = 0; j < 3; ++j) *projections[j] = describe_weight(f, p + names[j] + ".weight", widths[j], c.dim);
      auto same = [&](int a, int b) {
        return projections[a]->type == projections[b]->type && projections[a]->row_bytes == projections[b]->row_bytes;
      };
      if (same(0, 1)) first = 0, count = same(1, 2) ? 3 : 2;
      else if (same(1, 2)) first = 1, count = 2;
    }
    if (count > 0) {
      std::vector<weight> parts;
      for (int j = first; j < first + count; ++j) parts.push_back(*projections[j]);
      weight stacked = stack_weights(dev, f, parts, p + "attn_stacked").value();  // one type: same() says so
      l.stacked = layer_weights::stacked_projections{std::move(stacked), {}, first, count};
      progress.add(l.stacked->w);
    }
    for (int j = 0; j < 3; ++j)
      if (j < first || j >= first + count) *projections[j] = load(p + names[j] + ".weight", widths[j], c.dim);
    l.wo = load(p + "attn_output.weight", c.dim, q_width);
    l.ffn_norm = load_vector(dev, f, p + "ffn_norm.weight", c.dim);
    l.gate = load(p + "ffn_gate.weight", c.ffn, c.dim);
    l.up = load(p + "ffn_up.weight", c.ffn, c.dim);
    l.down = load(p + "ffn_down.weight", c.dim, c.ffn);
    if (c.qkv_bias) {
      // The stacked projections' biases only described (their bytes go up once, stacked).
      std::optional<weight>* biases[3] = {&l.bq, &l.bk, &l.bv};
      std::vector<weight> parts;
      for (int j = 0; j < 3; ++j) {
        const std::string name = p + names[j] + ".bias";
        if (j >= first && j < first + count) parts.push_back(*(*biases[j] = describe_vector(f, name, widths[j])));
        else *biases[j] = load_vector(dev, f, name, widths[j]);
      }
      if (l.stacked) l.stacked->bias = stack_weights(dev, f, parts, p + "attn_stacked.bias").value();  // F32 vectors
    }
    if (c.qk_norm) {
      l.q_norm = load_vector(dev, f, p + "attn_q_norm.weight", c.head_dim);
      l.k_norm = load_vector(dev, f, p + "attn_k_norm.weight", c.head_dim);
    }
    m.layers.push_back(std::move(l));
  }
  progress.finish();
  add_prefill_tiles(dev, f, m);
  return m;
}

}  // namespace tg::model
