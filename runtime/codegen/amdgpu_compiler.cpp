// amdgpu_compiler.cpp: the AMDGPU TargetMachine, the O3 pipeline and object emission (see
// amdgpu_compiler.hpp).
#include "runtime/codegen/amdgpu_compiler.hpp"
#include "runtime/codegen/amdgpu_linker.hpp"
#include "runtime/codegen/byte_words.hpp"
#include "runtime/codegen/target_emit.hpp"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Triple.h>

#include <chrono>
#include <cstdio>
#include <span>
#include <tg/core/error.hpp>
#include <tg/device.hpp>
#include <tg/log.hpp>

namespace tg::codegen {

namespace {

constexpr const char* amdhsa_triple = "amdgcn-amd-amdhsa";

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

amdgpu_compiler::amdgpu_compiler(const std::string& processor) : processor_(processor) {
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTarget();
  LLVMInitializeAMDGPUTargetMC();
  LLVMInitializeAMDGPUAsmPrinter();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(amdhsa_triple, error);
  if (target == nullptr) throw usage_error(str("amdgpu: LLVM has no AMDGPU target: ", error));
  const llvm::Triple triple(amdhsa_triple);
  // wave32: tg's launches and the emulator assume it (the descriptor's ENABLE_WAVEFRONT_SIZE32).
  target_.reset(target->createTargetMachine(triple.str(), processor, "+wavefrontsize32", llvm::TargetOptions(),
                                            llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (target_ == nullptr) throw usage_error(str("amdgpu: LLVM cannot target processor '", processor, "'"));
  if (!target_->getMCSubtargetInfo()->isCPUStringValid(processor))
    throw usage_error(str("amdgpu: '", processor, "' is not an AMDGPU processor LLVM 19 knows"));
}

amdgpu_compiler::~amdgpu_compiler() = default;

void amdgpu_compiler::prepare(llvm::Module& module) const {
  module.setTargetTriple(amdhsa_triple);
  module.setDataLayout(target_->createDataLayout());
}

std::vector<std::byte> amdgpu_compiler::compile(llvm::Module& module, const std::string& kernel) {
  std::lock_guard<std::mutex> guard(lock_);
  const emitted object = optimize_and_emit(module, *target_, processor_, llvm::CodeGenFileType::ObjectFile, "amdgpu", kernel,
                                           [](llvm::Module& m) { rewrite_byte_vectors(m, byte_word_target::amdgpu); });
  const double ir_ms = object.ir_ms, backend_ms = object.backend_ms;
  const auto link_start = std::chrono::steady_clock::now();
  std::vector<std::byte> code_object =
      link_amdgpu_object(std::as_bytes(std::span(object.bytes.data(), object.bytes.size())), kernel);
  if (debug_level() >= 1) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "amdgpu: %s for %s: IR passes %.1f ms, backend %.1f ms, link %.1f ms, %zu-byte code object",
                  kernel.c_str(), processor_.c_str(), ir_ms, backend_ms, ms_since(link_start), code_object.size());
    log(log_level::debug, line);
  }
  return code_object;
}

}  // namespace tg::codegen
