// llvm_value_ops.hpp: the shape-free half of the codegen (llvm_emitter.hpp): dtypes as LLVM
// types in registers and in memory, constants, and the unary, binary and cast ops, on
// scalars and vectors alike. 16-bit floats and bools are widened in registers (float, i1)
// and narrowed in memory. Only llvm_emitter.hpp includes it.
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <tg/ast/node.hpp>
#include <tg/core/error.hpp>

namespace tg::codegen {

class value_ops {
 protected:
  explicit value_ops(llvm::Module& m) : m_(m), ctx_(m.getContext()), b_(ctx_) {}

  llvm::Type* reg_type(dtype t) {
    switch (t) {
      case dtype::bool_: return b_.getInt1Ty();
      case dtype::int8: case dtype::uint8: return b_.getInt8Ty();
      case dtype::int16: case dtype::uint16: return b_.getInt16Ty();
      case dtype::int32: case dtype::uint32: return b_.getInt32Ty();
      case dtype::int64: return b_.getInt64Ty();
      case dtype::float16: case dtype::bfloat16: case dtype::float32: return b_.getFloatTy();
      case dtype::float64: return b_.getDoubleTy();
    }
    TG_UNREACHABLE("dtype");
  }
  llvm::Type* mem_type(dtype t) {
    switch (t) {
      case dtype::bool_: return b_.getInt8Ty();
      case dtype::float16: return b_.getHalfTy();
      case dtype::bfloat16: return b_.getInt16Ty();
      default: return reg_type(t);
    }
  }
  // A scalar type, or its vector form when `like` is a vector.
  llvm::Type* shaped(llvm::Type* scalar, llvm::Value* like) {
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType()))
      return llvm::FixedVectorType::get(scalar, vt->getNumElements());
    return scalar;
  }
  llvm::Value* int_const(llvm::Value* like, std::uint64_t v) { return llvm::ConstantInt::get(like->getType(), v); }

  llvm::Value* to_reg(llvm::Value* v, dtype t) {
    switch (t) {
      case dtype::bool_: return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
      case dtype::float16: return b_.CreateFPExt(v, shaped(b_.getFloatTy(), v));
      case dtype::bfloat16:
        return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, shaped(b_.getInt32Ty(), v)), 16), shaped(b_.getFloatTy(), v));
      default: return v;
    }
  }
  llvm::Value* to_mem(llvm::Value* v, dtype t) {
    switch (t) {
      case dtype::bool_: return b_.CreateZExt(v, shaped(b_.getInt8Ty(), v));
      case dtype::float16: return b_.CreateFPTrunc(v, shaped(b_.getHalfTy(), v));
      case dtype::bfloat16: {  // round to nearest even, NaN stays NaN
        llvm::Value* bits = b_.CreateBitCast(v, shaped(b_.getInt32Ty(), v));
        llvm::Value* odd = b_.CreateAnd(b_.CreateLShr(bits, 16), int_const(bits, 1));
        llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(odd, int_const(bits, 0x7FFF))), 16);
        llvm::Value* nan = b_.CreateFCmpUNO(v, v);
        llvm::Value* quiet = b_.CreateOr(b_.CreateLShr(bits, 16), int_const(bits, 0x40));
        return b_.CreateTrunc(b_.CreateSelect(nan, quiet, rounded), shaped(b_.getInt16Ty(), v));
      }
      default: return v;
    }
  }
  // Rounds a widened 16-bit float to its precision (a cast to float16/bfloat16).
  llvm::Value* round_to(llvm::Value* v, dtype t) {
    if (t != dtype::float16 && t != dtype::bfloat16) return v;
    return to_reg(to_mem(v, t), t);
  }

  llvm::Value* constant(const ast::node& x) {
    llvm::Type* t = reg_type(x.dt);
    if (x.dt == dtype::float16) return llvm::ConstantFP::get(t, double(float(half(float(x.value)))));
    if (x.dt == dtype::bfloat16) return llvm::ConstantFP::get(t, double(float(bfloat16(float(x.value)))));
    if (is_float(x.dt)) return llvm::ConstantFP::get(t, x.value);
    return llvm::ConstantInt::get(t, std::uint64_t(x.arg), is_signed_int(x.dt));
  }

  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::Value* a, llvm::Value* b = nullptr) {
    llvm::Function* fn = llvm::Intrinsic::getDeclaration(&m_, id, {a->getType()});
    if (b) return b_.CreateCall(fn, {a, b});
    return b_.CreateCall(fn, {a});
  }

  llvm::Value* lowest(dtype t) {
    llvm::Type* ty = reg_type(t);
    if (is_float(t)) return llvm::ConstantFP::getInfinity(ty, true);
    if (t == dtype::bool_ || is_unsigned_int(t)) return llvm::ConstantInt::get(ty, 0);
    return llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(ty->getIntegerBitWidth()));
  }

  llvm::Value* unary(const ast::node& x, llvm::Value* a, dtype from) {
    switch (x.o) {
      case ast::op::neg: return is_float(x.dt) ? b_.CreateFNeg(a) : b_.CreateNeg(a);
      case ast::op::exp2: return intrinsic(llvm::Intrinsic::exp2, a);
      case ast::op::log2: return intrinsic(llvm::Intrinsic::log2, a);
      case ast::op::sqrt: return intrinsic(llvm::Intrinsic::sqrt, a);
      case ast::op::sin: return intrinsic(llvm::Intrinsic::sin, a);
      case ast::op::reciprocal: return b_.CreateFDiv(llvm::ConstantFP::get(a->getType(), 1.0), a);
      case ast::op::cast: return cast(a, from, x.dt);
      case ast::op::bitcast: {
        llvm::Value* bits = to_mem(a, from);
        llvm::Type* to = shaped(mem_type(x.dt), a);
        return to_reg(bits->getType() == to ? bits : b_.CreateBitCast(bits, to), x.dt);
      }
      default: TG_UNREACHABLE("unary op");
    }
  }

  llvm::Value* cast(llvm::Value* a, dtype from, dtype to) {
    llvm::Type* t = shaped(reg_type(to), a);
    if (to == dtype::bool_) return is_float(from) ? b_.CreateFCmpUNE(a, llvm::ConstantFP::get(a->getType(), 0.0))
                                                   : b_.CreateICmpNE(a, llvm::ConstantInt::get(a->getType(), 0));
    if (is_float(from) && is_float(to)) {
      llvm::Value* v = a->getType() == t ? a : (t->getScalarSizeInBits() > a->getType()->getScalarSizeInBits()
                                                    ? b_.CreateFPExt(a, t) : b_.CreateFPTrunc(a, t));
      return round_to(v, to);
    }
    if (is_float(from)) return is_signed_int(to) ? b_.CreateFPToSI(a, t) : b_.CreateFPToUI(a, t);
    if (is_float(to)) return round_to(is_signed_int(from) ? b_.CreateSIToFP(a, t) : b_.CreateUIToFP(a, t), to);
    return b_.CreateIntCast(a, t, is_signed_int(from));
  }

  llvm::Value* binary(ast::op o, dtype t, llvm::Value* a, llvm::Value* c) {
    bool f = is_float(t), s = is_signed_int(t);
    switch (o) {
      case ast::op::add: return f ? b_.CreateFAdd(a, c) : b_.CreateAdd(a, c);
      case ast::op::sub: return f ? b_.CreateFSub(a, c) : b_.CreateSub(a, c);
      case ast::op::mul: return f ? b_.CreateFMul(a, c) : b_.CreateMul(a, c);
      case ast::op::div: return f ? b_.CreateFDiv(a, c) : (s ? b_.CreateSDiv(a, c) : b_.CreateUDiv(a, c));
      case ast::op::idiv: return s ? b_.CreateSDiv(a, c) : b_.CreateUDiv(a, c);
      case ast::op::mod: return s ? b_.CreateSRem(a, c) : b_.CreateURem(a, c);
      case ast::op::max:
        if (f) return intrinsic(llvm::Intrinsic::maximum, a, c);  // NaN in, NaN out
        return b_.CreateSelect(s ? b_.CreateICmpSGT(a, c) : b_.CreateICmpUGT(a, c), a, c);
      case ast::op::min:
        if (f) return intrinsic(llvm::Intrinsic::minimum, a, c);
        return b_.CreateSelect(s ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c), a, c);
      case ast::op::cmplt: return f ? b_.CreateFCmpOLT(a, c) : (s ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c));
      case ast::op::cmpeq: return f ? b_.CreateFCmpOEQ(a, c) : b_.CreateICmpEQ(a, c);
      case ast::op::cmpne: return f ? b_.CreateFCmpUNE(a, c) : b_.CreateICmpNE(a, c);
      case ast::op::bit_and: return b_.CreateAnd(a, c);
      case ast::op::bit_or: return b_.CreateOr(a, c);
      case ast::op::bit_xor: return b_.CreateXor(a, c);
      case ast::op::shl: return b_.CreateShl(a, c);
      case ast::op::shr: return s ? b_.CreateAShr(a, c) : b_.CreateLShr(a, c);
      default: TG_UNREACHABLE("binary op");
    }
  }

  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
};

}  // namespace tg::codegen
