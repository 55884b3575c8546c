// memory_plan.cpp: the allocations of transformer.cpp and model_weights.cpp, listed in the order
// they are made, laid out as the AM driver places them (memory_plan.hpp).
#include "llm/model/memory_plan.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <tg/core/error.hpp>
#include <tg/device.hpp>

#include "llm/gguf/gguf_file.hpp"
#include "llm/model/activation_kernels.hpp"
#include "llm/model/attention_kernels.hpp"
#include "llm/model/linear_kernels.hpp"

namespace tg::model {
namespace {

constexpr std::uint64_t page = 4096, big_page = 2ull << 20, mib = 1ull << 20;

std::uint64_t round_up(std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; }

enum part { weights_part, kv_part, activations_part, kernels_part };

// Allocations in order, placed as drivers/amd/am_memory.cpp's am_memory::allocate places them in a
// free range: sizes in 4 KiB pages, 2 MiB alignment from 2 MiB on, smaller ones into the holes
// that alignment left (the TLSF allocator takes any free block that fits). Each allocation is
// charged what it moved the end of the range by, so the parts add up to the range used. The
// range is assumed to start one page past a 2 MiB boundary: the worst start for alignment.
class layout {
 public:
  void add(part p, std::uint64_t bytes) {
    bytes = round_up(std::max<std::uint64_t>(bytes, 1), page);
    if (bytes < big_page) {
      for (auto& [from, to] : holes_)
        if (to - from >= bytes) {
          from += bytes;
          return;
        }
      charge(p, end_ + bytes);
      return;
    }
    const std::uint64_t start = round_up(end_, big_page);
    if (start > end_) holes_.push_back({end_, start});
    charge(p, start + bytes);
  }
  const memory_need& need() const { return need_; }

 private:
  void charge(part p, std::uint64_t new_end) {
    const std::uint64_t grown = new_end - end_;
    end_ = new_end;
    switch (p) {
      case weights_part: need_.weights += grown; break;
      case kv_part: need_.kv_cache += grown; break;
      case activations_part: need_.activations += grown; break;
      case kernels_part: need_.kernels += grown; break;
    }
  }
  std::uint64_t end_ = page;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> holes_;
  memory_need need_;
};

std::uint64_t tensor_bytes(const gguf::file& f, const std::string& name) {
  const gguf::tensor_info* t = f.find_tensor(name);
  return t ? f.tensor_bytes(*t).size() : 0;
}

// model_weights.cpp: load_model_weights, in its order; a missing tensor is load's error to report.
void add_weights(layout& l, const gguf::file& f, const model_config& c) {
  auto add = [&](const std::string& name) {
    if (const std::uint64_t b = tensor_bytes(f, name)) l.add(weights_part, b);
  };
  add("token_embd.weight");
  add("output_norm.weight");
  if (!c.tied_output) add("output.weight");
  add("rope_freqs.weight");
  for (std::int64_t i = 0; i < c.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    for (const char* n : {"attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
                          "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"})
      add(p + n);
    if (c.qkv_bias)
      for (const char* n : {"attn_q.bias", "attn_k.bias", "attn_v.bias"}) add(p + n);
    if (c.qk_norm)
      for (const char* n : {"attn_q_norm.weight", "attn_k_norm.weight"}) add(p + n);
  }
}

// transformer.cpp: the buffers of transformer::state for chunks of T tokens and a cache of
// `context` positions, in the constructor's order.
void add_activations(layout& l, const model_config& c, std::int64_t T, std::int64_t context) {
  const std::int64_t qw = c.n_head * c.head_dim, kvw = c.n_kv_head * c.head_dim;
  auto floats = [&](std::int64_t n) { l.add(activations_part, std::uint64_t(std::max<std::int64_t>(n, 1)) * 4); };
  for (int i = 0; i < 3; ++i) floats(T * c.dim);
  for (int i = 0; i < 3; ++i) floats(T * qw);
  for (int i = 0; i < 3; ++i) floats(T * kvw);
  floats(T * (qw + 2 * kvw));  // stacked projections (model_weights.hpp: layer_weights::stacked)
  for (int i = 0; i < 3; ++i) floats(T * c.ffn);
  floats(c.n_head * T * context);  // scores
  floats(c.n_head * T * context);  // probs
  floats(c.n_head * T);
  floats(c.n_head * T);
  floats(attention_runs * T * qw);
  floats(T * std::max<std::int64_t>(c.n_head, 1));
  floats(T * c.vocab);
  l.add(activations_part, std::uint64_t(T) * 4);  // tokens
  const std::int64_t widest = std::max({c.dim, qw, c.ffn});
  for (int block = 0; block < 2; ++block) {
    l.add(activations_part, std::uint64_t(T * widest) * 2);
    floats(T * widest / activation_block);
    floats(T * widest / activation_block);
  }
  floats(T * c.head_dim / 2);
  floats(T * c.head_dim / 2);
  l.add(activations_part, 4);  // eps
  // The plans' intermediates (plan_op.cpp), one row-sized buffer at most per plan: a page each.
  for (int i = 0; i < 16; ++i) l.add(activations_part, page);
}

// What the compiled kernels take (am_backend_program.cpp: one code object image and 16 kernarg
// slots each; am_graph.cpp: two command frames per graph, and a sequence has a graph per chunk
// length and head (transformer.cpp: with logits and without, for the full chunk, each shorter
// multiple of the token tile and each length under a tile) and two for decode (short and long
// contexts); am_scratch.hpp: the scratch area, 4 KiB until a kernel spills). The model compiles
// about 40 distinct kernels, 5 more for a full chunk's attention passes, on GPUs up to 4 for
// SwiGLU's rounding (2 per block size), 1 for a short decode step's attention, up to 3 for
// RoPE with the cache stores (by how the layers stack their projections), 2 for the norm's
// scale with its rounding's (one per block size), up to 2 for a decode step's projections in one
// dispatch (by the layers' mixes of projection types), and per weight type and shape 3 matmuls
// (decode, any chunk, the full chunk: linear_kernels.hpp); each is budgeted 16 KiB of code and
// 8 KiB of kernargs (the synthetic llama of tests/llm/model/vram_pressure_test.cpp measured
// about 4 + 4 KiB a kernel on gfx12), and each graph frame 32 bytes of commands and 256 of kernargs for each of the ~30 launches of a layer.
void add_kernels(layout& l, const gguf::file& f, const model_config& c, int sequences, std::int64_t chunk) {
  std::vector<std::pair<int, std::int64_t>> shapes;  // (tensor type, rows x cols) of the matrices
  for (const auto& t : f.tensors())
    if (t.ne[1] > 1) {
      const std::pair<int, std::int64_t> s{int(t.type), std::int64_t(t.ne[0] * 1000003 + t.ne[1])};
      if (std::find(shapes.begin(), shapes.end(), s) == shapes.end()) shapes.push_back(s);
    }
  const std::size_t kernels = 57 + 3 * shapes.size();
  for (std::size_t i = 0; i < kernels; ++i) {
    l.add(kernels_part, 16 << 10);
    l.add(kernels_part, 8 << 10);
  }
  const std::uint64_t launches = std::uint64_t(30 * c.n_layer + 16);
  const std::int64_t tile = prefill_token_lanes;
  const std::int64_t lengths = chunk / tile + std::min(chunk, tile - 1) + 1;  // tile multiples, shorter ones, the full chunk
  for (int s = 0; s < sequences; ++s)
    for (std::int64_t g = 0; g < 2 * lengths + 2; ++g) l.add(kernels_part, 2 * launches * (32 + 256));
}

kv_cache_type resolved_cache(const gguf::file& f, kv_cache_type requested) {
  if (requested != kv_cache_type::automatic) return requested;
  const gguf::tensor_info* q = f.find_tensor("blk.0.attn_q.weight");
  return q && q->type == gguf::tensor_type::f32 ? kv_cache_type::f32 : kv_cache_type::f16;
}

// "5123 MiB", "8.7 MiB": tenths below 100 MiB, where whole MiB would hide the difference.
std::string in_mib(std::uint64_t bytes) {
  if (bytes >= 100 * mib) return str(bytes / mib, " MiB");
  const std::uint64_t tenths = bytes * 10 / mib;
  return str(tenths / 10, ".", tenths % 10, " MiB");
}

}  // namespace

memory_need memory_need_at(const gguf::file& file, const model_config& c, const transformer_options& options,
                           std::int64_t context) {
  context = std::max<std::int64_t>(context, 1);
  const std::int64_t T = std::max<std::int64_t>(std::min(options.chunk_size, context), 1);
  const int sequences = std::max(options.sequences, 1);
  const std::uint64_t element = resolved_cache(file, options.cache) == kv_cache_type::f16 ? 2 : 4;
  layout l;
  add_weights(l, file, c);
  add_activations(l, c, T, context);
  const std::uint64_t cache = std::uint64_t(c.n_kv_head * context * c.head_dim) * element;
  for (std::int64_t i = 0; i < c.n_layer; ++i)
    for (int s = 0; s < 2 * sequences; ++s) l.add(kv_part, cache);
  add_kernels(l, file, c, sequences, T);
  return l.need();
}

memory_plan plan_memory(const device& dev, const gguf::file& file, const model_config& c,
                        const transformer_options& options) {
  memory_plan p;
  p.max_context = std::max<std::int64_t>(std::min(options.max_context, c.context_length), 1);
  p.chunk_size = std::max<std::int64_t>(std::min(options.chunk_size, p.max_context), 1);
  p.sequences = std::max(options.sequences, 1);
  p.cache = resolved_cache(file, options.cache);
  p.need = memory_need_at(file, c, options, p.max_context);
  p.free = dev.impl().free_bytes();
  if (p.fits()) return p;
  // The largest context whose need fits, when even one position does (the need grows with it).
  if (memory_need_at(file, c, options, 1).total() <= *p.free) {
    std::int64_t lo = 1, hi = p.max_context;  // need(lo) fits, need(hi) does not
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (memory_need_at(file, c, options, mid).total() <= *p.free ? lo : hi) = mid;
    }
    p.fitting_context = lo;
  }
  return p;
}

std::string describe_shortfall(const memory_plan& p, const std::string& model_name) {
  if (p.fits()) return {};
  const memory_need& n = p.need;
  std::string s = str(model_name, ": does not fit in the device's memory: it needs ", in_mib(n.total()), " (weights ",
                      in_mib(n.weights), ", KV cache ", in_mib(n.kv_cache), " for ", p.max_context, " positions x ",
                      p.sequences, p.sequences == 1 ? " sequence" : " sequences", " in ", kv_cache_type_name(p.cache),
                      ", activations ", in_mib(n.activations), ", kernels ", in_mib(n.kernels), ") and ", in_mib(*p.free),
                      " is free");
  if (p.fitting_context) {
    s += str("; --max-context ", *p.fitting_context, " or less would fit");
    if (p.cache == kv_cache_type::f32) s += " (or --cache-type f16 for a cache half the size)";
  } else {
    s += p.sequences > 1 ? "; it does not fit at any context length with this many sequences: use fewer (--parallel)"
                         : "; the weights alone do not fit at any context length: use a smaller model or a smaller quantization";
  }
  return s;
}

void require_fits(const memory_plan& plan, const std::string& model_name) {
  if (!plan.fits()) throw device_error(describe_shortfall(plan, model_name));
}

}  // namespace tg::model
