// x86_bit_masks.hpp: lanes that test successive bits of one scalar, as that scalar read into an
// AVX-512 mask register. Q5_0 and Q5_1 keep a block's 32 fifth bits in one 32-bit word (bit j for
// value j), and their decode tests bit j in lane j: (mask & 1 << j) != 0. LLVM 19 vectorizes that
// test as written: the word's two 16-bit halves broadcast into a 512-bit vector, an and with the
// 32 bit constants and a compare (vpbroadcastw twice, vinserti64x4, vptestnmw: four vector
// instructions, one of them 512 bits wide, which Zen 4 issues twice). The word itself is the mask:
// kmovd moves it into a mask register in one instruction (LLVM lowers `bitcast i32 to <32 x i1>`
// so), leaving the vector ports to the dot products.
//
// rewrite_bit_test_masks replaces, in every function of an optimised module (after the O3
// pipeline, whose vectorizers made the lanes), each
//   icmp ne|eq (and V, C), zeroinitializer     on <N x iW>, N = 8, 16, 32 or 64
// where C's lane i is 1 << (i mod W) and V's lanes in each run of W are one scalar s_k (an
// insertelement chain or a splat: llvm::findScalarElement), with
//   bitcast (or_k zext(s_k) << k W) to <N x i1>               (ne; its complement for eq)
// The same lanes, bit for bit: lane i is bit i mod W of s_(i / W) either way.
#pragma once

namespace llvm {
class Module;
}

namespace tg::codegen {

// Returns the number of compares rewritten (for tests). For targets with AVX-512 BW, whose mask
// registers hold 32 and 64 lanes; elsewhere LLVM would expand the bitcast into the same compare.
int rewrite_bit_test_masks(llvm::Module& module);

}  // namespace tg::codegen
