// byte_words.hpp: four bytes as one 32-bit word on the GPU targets. The int8 matmuls' quads
// (kernel_frame::dot4: dp4a, v_dot4_i32_iu8) unpack their weights as <4 x i8> vectors: Q4_K's
// high nibbles are a byte-wise shift, Q6_K's values a shift, a mask and an add of -32. Both GPU
// backends hold a <4 x i8> in one 32-bit register, but LLVM 19 lowers only its bitwise ops (and,
// or, xor) as one word op; a shift or an add becomes an extract, an op and an insert per byte
// (NVPTX: bfe, cvt, op, cvt, bfi; AMDGPU: 16-bit ops and repacking), which made Q4_K's decode
// matvec bound by its unpacking (about 28% of an H200's copy bandwidth).
//
// rewrite_byte_vectors replaces, in every function of an optimised module (after the O3 pipeline,
// so nothing folds the words back into byte lanes), each of these on <4 x i8> with word ops of the
// same result (SIMD within a register):
//   lshr / shl by a splat constant c      the word shifted by c, masked to each byte's bits
//   add, sub                              the low 7 bits of each byte added or subtracted as one
//                                         word, the top bits fixed by xor (no carry crosses a byte)
//   trunc from <4 x i16> (NVPTX only)     one prmt of the two words holding the i16 lanes (PTX
//                                         ISA, "prmt": bytes 0, 2, 4, 6)
#pragma once

namespace llvm {
class Module;
}

namespace tg::codegen {

enum class byte_word_target { amdgpu, nvptx };

// Returns the number of instructions rewritten (for tests).
int rewrite_byte_vectors(llvm::Module& module, byte_word_target target);

}  // namespace tg::codegen
