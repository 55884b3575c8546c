// linear_kernels.hpp: kernels that read weight matrices: the embedding gather and the matmul.
#pragma once
#include <tg/ast/kernel_builder.hpp>

#include "llm/model/launch_vars.hpp"
#include "llm/model/weight.hpp"

namespace tg::model {

// x[t][i] = E[tokens[t]][i] for t < T. Slots: 0 x (float32), 1 E, 2 tokens (int32).
ast::kernel embedding_kernel(const weight& table);

// What a matmul adds to W·x.
struct matmul_epilogue {
  bool bias = false;      // + b[n] (slot 4, float32)
  bool residual = false;  // + r[t][n] (slot 3, float32)
};

// out[t][n] = sum_k W[n][k] * x[t + first][k] for t < rows, with W in its GGUF encoding.
// Slots: 0 out, 1 W, 2 x, then the epilogue's. rows/first are launch variables (first may be
// -1: none).
// For weights where uses_int8_activations(w), x is instead the 8-bit rounding of those rows
// in blocks of activation_block_for(w) values (activation_kernels.hpp, made with the same
// rows/first): slot 2 xq (int16, row t at t * K; int8 for matmul_form::gpu), slot 5 xs, and where
// uses_activation_sums(w) slot 6 the per-32 sums (activation_sum_kernel's, in the same
// block size; a GPU's decode kernel of a K-quant sums the activations itself and ignores slot
// 6: reads_activation_sums); the kernel ignores `first`, and slots 3/4 must be given (any
// buffer) when unused.
// form: how the device runs the int8 dot products (matmul_form_for).
enum class matmul_form {
  narrow,  // a CPU with 256-bit vectors
  wide,    // a CPU with 512-bit vectors (AVX-512): Q4_K's decode takes 16 accumulator lanes, not 8
  // A GPU: each of 8 lanes per 32 values takes a quad of neighbouring values (4 weight bytes, 4
  // activations), whose products one 4-byte integer dot product sums (NVIDIA dp4a, RDNA
  // v_dot4_i32_iu8), where a CPU's pairs took two lanes' products per pmaddwd.
  gpu,
};
ast::kernel matmul_kernel(const weight& w, launch_var rows, int first, matmul_epilogue epilogue = {},
                          matmul_form form = matmul_form::narrow);
// Whether dev is a CPU with 512-bit vectors (AVX-512).
bool wide_vectors_for(const device& dev);
// The form of dev's matmuls: gpu for a GPU, wide or narrow for the CPU (wide_vectors_for).
matmul_form matmul_form_for(const device& dev);
// The same matmul for chunks whose token count is a multiple of prefill_token_lanes: each
// decoded weight vector feeds 4 token accumulators, so prefill decodes a weight once per 4
// tokens, not per token (more tokens' activations stop fitting L1 beside the weights).
// Weights with tiles (w.tile_rows > 0) take matmul_tiles.hpp's kernel, whose slot 7 is w.tiles.
// tokens > 0 (GPUs, a multiple of prefill_token_lanes): the kernel for chunks of exactly that
// many tokens, its token range a constant, so the GPU's default opts (and BEAM) schedule it for
// them; 0: any multiple, the token range a launch variable (counted at one token by the heuristic).
inline constexpr int prefill_token_lanes = 4;
ast::kernel matmul_prefill_kernel(const weight& w, matmul_epilogue epilogue = {}, matmul_form form = matmul_form::narrow,
                                  std::int64_t tokens = 0);
// For decode batches of a multiple of prefill_token_lanes sequences: each decoded weight
// vector feeds that many token accumulators, and each row is bit-identical to matmul_kernel's.
// Weights that decode from tiles (matmul_tiles.hpp) take the tiled kernel in both.
ast::kernel matmul_batch_kernel(const weight& w, matmul_epilogue epilogue = {}, launch_var rows = var_tokens,
                                matmul_form form = matmul_form::narrow);

// Whether the matmuls of w take 8-bit activations (its type has dequant_kernel.hpp's
// int_form), and whether they also take the activations' per-block sums (types with an
// offset b: Q4_1, Q5_1, Q4_K, Q5_K; a given kernel says for itself, reads_activation_sums:
// the VNNI tiles read them for Q8_0, Q4_0 and Q5_0 too, whose bytes carry a zero point).
bool uses_int8_activations(const weight& w);
bool uses_activation_sums(const weight& w);
// Whether a matmul kernel of such a weight reads the sums (slot 6) this launch must provide.
inline constexpr int activation_sums_slot = 6;
bool reads_activation_sums(const ast::kernel& k);
// Whether it reads the per-8 sums times 32 (activation_sum8_kernel; Q6_K's decode tiles), slot 9.
inline constexpr int activation_sums8_slot = 9;
bool reads_activation_sums8(const ast::kernel& k);
// Whether it reads the rounded activations (slot 2) as int8 bytes rather than int16: a GPU's
// matmuls (whose rounding stores bytes), and on the CPU the VNNI tiles and decode's quads
// (linear_kernels.cpp: cpu_decode_quads), which take the int8 copy of the int16 values
// (activation_byte_kernel).
inline constexpr int activation_values_slot = 2;
bool reads_activation_bytes(const ast::kernel& k);
// The activation block the matmuls of w want: 256 for K-quants (one scale per super-block,
// so a super-block's integer sums convert once), else 32.
std::int64_t activation_block_for(const weight& w);

}  // namespace tg::model
