// matmul_tiles.hpp: weights repacked at load time into row tiles, and the matmul that reads
// them (prefill; decode too where the tiles are no larger than the file): each 8-bit activation pair feeds R weight rows in one vector
// instruction (x86 vpdpwssd with AVX-512 VNNI / AVX-VNNI, else vpmaddwd + vpaddd).
//
// The file layout puts a row's values next to each other, so a vector holds 32 values of one
// row and each (row, token, 32 values) pays for a conversion and two float operations. Here a
// vector holds one value pair of R rows: 32 values cost each (tile, token) 16 pair
// instructions and one float step for all R rows (ggml interleaves rows in its repacked CPU
// kernels, ggml/src/ggml-cpu/ggml-cpu-aarch64.cpp, for the same reason).
//
// Layout: tiles of R rows (weight::tile_rows) one after another; in a tile, the rows'
// sub-blocks of S values (256 for Q6_K, else 32: the span of one float scale), each
//   float a[R]   the sub-block's scale per row (d; d * sc for Q4_K/Q5_K; Q6_K's d); for
//                Q8_0 fp16 a[R], the file's d, so that its tiles take the file's 8.5 bits
//   float b[R]   types with a minimum only (Q4_1, Q5_1, Q4_K, Q5_K): the offset (-m;
//                dmin * m for K-quants), so that W = a * q - b
//   quants       S / 2 pairs x R rows x 2 values, pair p of row r at p * 2R + 2r: int8
//                (Q8_0 q, Q4_0 q - 8, Q5_0 q - 16, Q4_1/Q5_1/Q4_K/Q5_K q), or int16 for
//                Q6_K ((q - 32) times its 16-value int8 scale); or as quads (tile_quads_for)
//                S / 4 quads x R rows x 4 values, quad p of row r at p * 4R + 4r, as uint8
//                (Q8_0 q + 128, Q5_0 its unsigned value with offsets 16 a, the others q);
//                Q4_0 and Q4_1 as quads keep the file's nibble bytes instead, row r's bytes
//                4p..4p+3 at p * 4R + 4r (quad p in their low nibbles, quad p + 4 in the
//                high ones), with fp16 d (Q4_0's zero point 8 a computed in the kernel,
//                Q4_1's -m an fp16 offset): the file's 4.5 / 5 bits, so they decode from
//                their tiles too. Q4_K as quads keeps whole super-blocks (S = 256): fp16
//                d[R] and dmin[R], its 8 scales and 8 minimums a byte each (sc[j][R], m[j][R],
//                unpacked from the file's 6 bits), then the file's nibble bytes, row r's
//                bytes 4p..4p+3 of sub-block pair i at (8i + p) * 4R + 4r: 4.625 bits a value
//                against the file's 4.5, one float step per 256 values, so it decodes from
//                its tiles as well.
//   fifth bits   Q5_0 and Q5_1's decode tiles (weight::decode_tiles, beside the prefill
//                tiles above): Q4_0 / Q4_1's nibble layout, then a byte per row per 4 nibble
//                bytes, bit e of byte cR + r the fifth bit of row r's value 4c + e and bit
//                4 + e that of 16 + 4c + e: the file's 5.5 / 6 bits.
//   five planes  Q5_K's decode tiles as quads: Q4_K's super-block header, then per 32-value
//                sub-block five planes of R x 4 bytes, each byte a value's 5 bits and 3 bits of
//                the sub-block's last three quads: 5.625 bits a value against the file's 5.5.
//   six bits     Q6_K's decode tiles: whole super-blocks, fp16 d[R], the 16 int8 scales
//                sc[g][R], then per 16-value group three planes of R x 4 bytes, each byte a
//                value's 6 bits and 2 bits of the group's fourth quad: the file's 6.5625
//                bits. Their zero point 32 takes the activations' per-8 sums
//                (activation_sum8_kernel), slot 9.
// Bits per value (the file's): Q8_0 8.5 (8.5), Q4_0, Q5_0 9 (4.5, 5.5), Q4_1, Q5_1, Q4_K, Q5_K 10
// (5, 6, 4.5, 5.5), Q6_K 16.1 (6.6); as quads Q4_0 4.5, Q4_1 5, Q4_K 4.625. Qwen2.5-0.5B's
// Q4_K_M (most of it Q5_0: its 896-wide rows are no multiple of 256) held 456 MB of tiles beside
// its 395 MB file (when measured, before Q4_K's super-block tiles). The tiles are a
// copy: the file's bytes stay mapped for decode, which streams them at memory bandwidth,
// except where decode reads tiles of the file's size (Q8_0, Q6_K's decode tiles; as quads Q4_0,
// Q4_1, Q4_K, and Q5_0 / Q5_1 / Q5_K's decode tiles), which the file's pages then leave.
#pragma once
#include <cstdint>

#include <tg/ast/kernel_builder.hpp>

#include "llm/model/linear_kernels.hpp"
#include "llm/model/weight.hpp"

namespace tg::model {

// The slots of the tiled matmul's tiles: the prefill tiles, and decode's own where the weight
// has them (weight::decode_tiles: a decode kernel of Q6_K, or of Q5_0 / Q5_1 / Q5_K as quads, reads slot 8, not 7).
constexpr int tiles_slot = 7, decode_tiles_slot = 8;

// Rows per tile on dev: 32 (two vectors per token) with AVX-512, 8 (one) with 16 vector
// registers, so that 4 tokens' integer and float accumulators stay in registers; 0 when dev
// is not the CPU (the tiles are a CPU layout).
std::int64_t tile_rows_for(const device& dev);
// Whether tiles of `type` on dev hold quads of unsigned bytes, read against the activations as
// signed bytes (activation_byte_kernel): with AVX-512 VNNI for every type, as vpdpbusd (4
// products per lane where vpdpwssd takes 2, and the weights need no widening); without VNNI
// for the types whose bytes stay below 128 (all but Q8_0), as vpmaddubsw + vpmaddwd. Q6_K's
// prefill tiles keep their int16 pairs (its decode tiles are quads on every level).
bool tile_quads_for(const device& dev, gguf::tensor_type type);
// Whether w has a tiled form (a type with an int form, dequant_kernel.hpp, rows a multiple of 32).
bool has_tiles(const weight& w);
// The bytes add_tiles would allocate for w (0 when w has no tiled form), decode tiles included.
std::size_t tile_bytes(const weight& w, std::int64_t rows, bool quads, bool decode_only = false);
// Repacks w.data (host memory) into w.tiles with `rows` rows per tile (tile_rows_for), and into
// w.decode_tiles where the type has a decode layout of its own (Q6_K; Q5_0 / Q5_1 / Q5_K as quads).
// With `decode_only`, only the tiles decode reads (the output head, which never runs prefill's
// kernel: Q6_K's 16-bit prefill tiles of a 128k-row head would take 525 MB).
void add_tiles(device& dev, weight& w, std::int64_t rows, bool quads, bool decode_only = false);
// Whether decode reads w's tiles rather than its file bytes: where the tiles it would read take
// no more than a 32nd over the file's bytes (Q8_0, whose tiles keep the file's fp16 scales;
// Q6_K from its decode tiles; as quads Q4_0 and Q4_1 as nibble quads, Q4_K's super-blocks with
// their scales as bytes, Q5_0, Q5_1 and Q5_K from their decode tiles), streaming them costs about the same, and a decode batch of
// several sequences then shares each tile's weights across its token lanes with each row
// computed exactly as one token computes it.
bool decodes_from_tiles(const weight& w);
// Whether prefill reads w's tiles: w has them, and not decode's alone (add_tiles' decode_only
// where the type has a decode layout of its own, e.g. Q6_K's six bits).
bool prefills_from_tiles(const weight& w);
// Whether the tiles decode would read for w, `rows` rows a tile, take at most a 32nd more bytes than its file.
bool tiles_fit_file_bytes(const weight& w, std::int64_t rows, bool quads);
// Whether w's tiled matmul reads the activations as int8 (quads) rather than int16, and
// whether it reads their per-32 sums (types with an offset, and Q8_0 / Q4_0 / Q5_0 as quads:
// their unsigned bytes carry a zero point).
bool reads_activation_bytes(const weight& w);
bool tiles_take_sums(const weight& w);
// out[t][n] = sum_k W[n][k] * x[t][k] for the `rows` launch variable's T tokens (a multiple of
// token_lanes), over the 8-bit activations linear_kernels.hpp describes. Slots as
// matmul_kernel's (1, the file bytes, unused), and 7 the tiles; with `decode`, the tiles
// decode reads (8, the decode tiles, where w has them; Q6_K's also read slot 9, the per-8
// sums: linear_kernels.hpp's activation_sums8_slot). Each (row, token) sums the same terms
// in the same order whatever token_lanes is, so a row's value does not depend on how many
// tokens ran beside it; one token lane prefetches the tile stream as decode does.
ast::kernel tiled_matmul_kernel(const weight& w, matmul_epilogue epilogue = {}, int token_lanes = prefill_token_lanes,
                                launch_var rows = var_tokens, bool decode = false);

}  // namespace tg::model
