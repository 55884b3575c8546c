// matmul_tiles.cpp: the row-tiled weight layout (matmul_tiles.hpp) and its prefill matmul.
#include "llm/model/matmul_tiles.hpp"

#include <cstring>
#include <vector>
#include <tg/core/error.hpp>

#include "drivers/cpu/cpu_target.hpp"

namespace tg::model {
namespace {

using gguf::tensor_type;

// Values per sub-block (one scale), and whether the layout has offsets b and nibble quants.
struct tile_format {
  std::int64_t rows = 32, sub = 32;
  bool offsets = false, nibbles = false;
  std::int64_t header_bytes() const { return (offsets ? 8 : 4) * rows; }
  std::int64_t sub_bytes() const { return header_bytes() + sub * rows / (nibbles ? 2 : 1); }
};

tile_format format_of(tensor_type type, std::int64_t rows) {
  if (type == tensor_type::q4_k) return {rows, 32, true, true};
  if (type == tensor_type::q6_k) return {rows, 16, false, false};
  return {rows, 32, false, false};
}

float half_at(const std::uint8_t* p) {
  half h;
  std::memcpy(&h.bits, p, 2);
  return float(h);
}

// One file block as integers: q (the block's values), and per sub-block a and b with
// W = a * q - b, following ggml-quants.c's dequantize_row_q8_0 / _q4_K / _q6_K (and
// gguf/dequant_reference.cpp).
void decode_block(tensor_type type, const std::uint8_t* blk, std::int8_t* q, float* a, float* b) {
  if (type == tensor_type::q8_0) {
    a[0] = half_at(blk);
    std::memcpy(q, blk + 2, 32);
    return;
  }
  if (type == tensor_type::q4_k) {
    const float d = half_at(blk), dmin = half_at(blk + 2);
    const std::uint8_t* s = blk + 4;
    for (int j = 0; j < 8; ++j) {
      int sc = 0, mn = 0;
      if (j < 4) sc = s[j] & 63, mn = s[j + 4] & 63;
      else sc = (s[j + 4] & 0x0F) | (s[j - 4] >> 6) << 4, mn = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
      a[j] = d * float(sc);
      b[j] = dmin * float(mn);
      for (int l = 0; l < 32; ++l) {
        const std::uint8_t byte = blk[16 + 32 * (j / 2) + l];
        q[32 * j + l] = std::int8_t(j % 2 == 0 ? byte & 15 : byte >> 4);
      }
    }
    return;
  }
  // Q6_K: value v = 128 h + 32 k + l (l < 32) has scale v / 16.
  const float d = half_at(blk + 208);
  for (int j = 0; j < 16; ++j) a[j] = d * float(std::int8_t(blk[192 + j]));
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const std::uint8_t* ql = blk + 64 * h;
      const std::uint8_t high = blk[128 + 32 * h + l];
      const int v[4] = {(ql[l] & 15) | (high & 3) << 4, (ql[l + 32] & 15) | ((high >> 2) & 3) << 4,
                        (ql[l] >> 4) | ((high >> 4) & 3) << 4, (ql[l + 32] >> 4) | ((high >> 6) & 3) << 4};
      for (int k = 0; k < 4; ++k) q[128 * h + 32 * k + l] = std::int8_t(v[k] - 32);
    }
}

}  // namespace

std::int64_t tile_rows_for(const device& dev) {
  if (dev.name() != "CPU") return 0;
  return cpu::host_cpu_target().vector_registers >= 32 ? 32 : 8;
}

bool has_tiles(const weight& w) {
  const bool type_ok = w.type == tensor_type::q8_0 || w.type == tensor_type::q4_k || w.type == tensor_type::q6_k;
  return type_ok && w.rows % 32 == 0 && uses_int8_activations(w);
}

void add_tiles(device& dev, weight& w, std::int64_t rows) {
  if (!has_tiles(w) || (rows != 8 && rows != 16 && rows != 32))
    throw usage_error(str("add_tiles: weight ", w.name, " has no tiled form of ", rows, " rows"));
  const tile_format f = format_of(w.type, rows);
  const std::int64_t tile_rows = rows;
  const auto& traits = gguf::traits_of(w.type);
  const std::int64_t block = traits.block_elems, subs = w.cols / f.sub, per_block = block / f.sub;
  std::vector<std::uint8_t> out(std::size_t(w.rows / tile_rows * subs * f.sub_bytes()));
  auto q = std::vector<std::int8_t>(std::size_t(block));
  auto a = std::vector<float>(std::size_t(per_block)), b = a;
  const auto* file = static_cast<const std::uint8_t*>(w.data.data());
  for (std::int64_t n = 0; n < w.rows; ++n) {
    const std::int64_t tile = n / tile_rows, r = n % tile_rows;
    for (std::int64_t blk = 0; blk < w.cols / block; ++blk) {
      decode_block(w.type, file + n * w.row_bytes + blk * traits.block_bytes, q.data(), a.data(), b.data());
      for (std::int64_t s = 0; s < per_block; ++s) {
        std::uint8_t* at = &out[std::size_t((tile * subs + blk * per_block + s) * f.sub_bytes())];
        std::memcpy(at + 4 * r, &a[std::size_t(s)], 4);
        if (f.offsets) std::memcpy(at + 4 * (tile_rows + r), &b[std::size_t(s)], 4);
        std::uint8_t* quants = at + f.header_bytes();
        for (std::int64_t j = 0; j < f.sub; ++j) {
          const std::int8_t v = q[std::size_t(s * f.sub + j)];
          const std::int64_t p = j / 2, e = j % 2;
          if (!f.nibbles) {
            quants[p * 2 * tile_rows + 2 * r + e] = std::uint8_t(v);
          } else {
            std::uint8_t& byte = quants[(p % 8) * 2 * tile_rows + 2 * r + e];
            byte = std::uint8_t(p < 8 ? (byte & 0xF0) | v : (byte & 0x0F) | v << 4);
          }
        }
      }
    }
  }
  w.tiles = dev.allocate(out.size());
  w.tiles.copy_in(out.data(), out.size());
  w.tile_rows = rows;
}

// Output ranges: tiles (split over threads), tokens (scalar lanes), the tile's rows (a
// vector). Per sub-block g the integer dot over pairs p (a lane reduce of 2 inside the row
// vector: x86 pmaddwd, folded with the sum into vpdpwssd where VNNI is on), then one float
// step for the tile: dot * (a * s) - b * (s * sum x), s the activation scale. 32 rows per
// tile on AVX-512 measured faster than 16 (Q8_0 8192 x 2048, 32 tokens, one thread: 9 ms
// against 15): two vectors per token give eight independent vpdpwssd chains, not four.
ast::kernel tiled_matmul_kernel(const weight& w, matmul_epilogue epilogue) {
  if (w.tile_rows == 0) throw usage_error(str("tiled_matmul_kernel: weight ", w.name, " has no tiles (add_tiles)"));
  const tile_format f = format_of(w.type, w.tile_rows);
  const std::int64_t tile_rows = w.tile_rows;
  const std::int64_t K = w.cols, N = w.rows, subs = K / f.sub, act_block = activation_block_for(w);
  kernel_builder kb;
  auto tile = kb.output_range(N / tile_rows);
  auto t = kb.output_range(kb.variable(var_tokens));
  auto r = kb.output_range(tile_rows);
  auto g = kb.reduce_range(subs);
  auto at = (tile * subs + g) * f.sub_bytes();  // the sub-block's bytes
  auto quants = at + f.header_bytes();
  auto p = kb.reduce_range(f.sub / 2);
  auto e = kb.reduce_range(2);
  kvalue q;
  if (f.nibbles) {
    // Pairs p and p + 8 share bytes (low, high nibble). Widened before the shift: x86 shifts
    // 16-bit lanes (vpsrlw), not bytes. One loop over both: written as two loops LLVM unrolled
    // and interleaved them and spilled (Q4_K 8192 x 2048: 20 ms against 15).
    auto byte = kb.cast(dtype::int16, kb.load<std::uint8_t>(7, quants + (p % 8) * (2 * tile_rows) + r * 2 + e));
    q = (byte >> kb.cast(dtype::int16, (p / 8) * 4)) & 15;
  } else {
    q = kb.load<std::int8_t>(7, quants + p * (2 * tile_rows) + r * 2 + e);
  }
  auto xq = kb.load<std::int16_t>(2, t * K + g * f.sub + p * 2 + e);
  auto dot = kb.sum(kb.sum_lanes(kb.cast(dtype::int32, q) * kb.cast(dtype::int32, xq), e), p);
  auto a = kb.load<float>(7, at / 4 + r);
  auto s = kb.load<float>(5, t * (K / act_block) + (g * f.sub) / act_block);
  auto term = kb.cast(dtype::float32, dot) * (a * s);
  if (f.offsets) {
    auto b = kb.load<float>(7, at / 4 + tile_rows + r);
    // The per-32 sums: s * sum as float for 32-value activation blocks, the integer sum for 256.
    auto xsum = act_block == 32 ? kb.load<float>(6, t * (K / 32) + g)
                                : kb.cast(dtype::float32, kb.load<std::int32_t>(6, t * (K / 32) + g)) * s;
    term = term - b * xsum;
  }
  auto acc = kb.sum(term, g);
  auto n = tile * tile_rows + r;
  if (epilogue.bias) acc = acc + kb.load<float>(4, n);
  if (epilogue.residual) acc = acc + kb.load<float>(3, t * N + n);
  kb.store(0, t * N + n, acc);
  ast::kernel k = kb.finish();
  k.upcast = {1, int(prefill_token_lanes), int(tile_rows)};
  k.vector_lanes = true;
  return k;
}

}  // namespace tg::model
