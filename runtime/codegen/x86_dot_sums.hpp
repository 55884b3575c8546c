// x86_dot_sums.hpp: the int8 matmuls' lane sums named as the x86 instructions that compute them
// (llvm_emitter_reduce.cpp's reduce_as_lanes calls these): pair sums of 16-bit products as pmaddwd
// (folded into vpdpwssd with VNNI by LLVM's instruction selection), quad sums of unsigned by
// signed bytes as vpdpbusd (AVX-512 VNNI; pmaddubsw + pmaddwd without it), whose running sum is folded in here because LLVM
// does not. Each returns null where the target or the value's shape has no such instruction,
// and the caller writes the sum out as shuffles and adds.
#pragma once
#include <llvm/IR/IRBuilder.h>

#include "runtime/codegen/llvm_kernel.hpp"

namespace tg::codegen {

// v: a multiply of two sign- or zero-extended values of at most 16 bits, <2 outer x i32>;
// the sums of its neighbouring pairs, <outer x i32>, as pmaddwd in the target's vector width.
llvm::Value* x86_pair_sums(llvm::IRBuilder<>& b, const x86_isa& isa, llvm::Value* v, int outer);
// v: a multiply of a zero-extended and a sign-extended byte (either may be a constant that fits
// its byte), <4 outer x i32>; the sums of its neighbouring quads, <outer x i32>, as vpdpbusd
// with a zero accumulator (the 256-bit form for 8 sums on a 512-bit target), or without VNNI as
// pmaddubsw and pmaddwd against ones where the unsigned bytes are known to be below 128.
llvm::Value* x86_quad_sums(llvm::IRBuilder<>& b, const x86_isa& isa, llvm::Value* v, int outer);
// acc + v where v is x86_quad_sums' result: the same vpdpbusd calls accumulating onto acc's
// pieces; null when v is not such a result.
llvm::Value* x86_fold_quad_sums(llvm::IRBuilder<>& b, llvm::Value* acc, llvm::Value* v);

// A sum of `count` values like v, x86_quad_sums' AVX2 result (pmaddwd of pmaddubsw's pair sums
// against ones), can sum the int16 pairs and widen once: where count of them cannot leave int16
// (the unsigned bytes' known bits bound each pair sum: Q4's nibbles, 2 * 15 * 128, allow 8), the
// pairs under v (<2N x i16>, the pmaddubsw results concatenated, each `chunk` lanes wide), else
// null. A trip of the loop then takes one vpaddw where it took a pmaddwd and a vpaddd;
// x86_widen_pair_sums ends it.
llvm::Value* x86_narrow_quad_sums(llvm::IRBuilder<>& b, llvm::Value* v, std::int64_t count, unsigned& chunk);
// The int32 sums of neighbouring int16 pairs (pmaddwd against ones), in calls of `chunk` int16
// lanes (x86_narrow_quad_sums' pmaddubsw width: 16, or 32 with AVX-512 BW); null if they do not divide.
llvm::Value* x86_widen_pair_sums(llvm::IRBuilder<>& b, llvm::Value* pairs, unsigned chunk);

// a * c where one side is x86_quad_sums' AVX2 result (or a sum or difference of them) and the
// other an int32 scale known to fit 16 bits: pmaddwd against the scale's pairs instead of ones,
// the same int32, one vpmulld fewer; null when the operands are not of that shape, or the target
// is not x86 without VNNI.
llvm::Value* x86_scale_quad_sums(llvm::IRBuilder<>& b, const x86_isa& isa, llvm::Value* a, llvm::Value* c);

}  // namespace tg::codegen
