// nvptx_compiler.cpp: the NVPTX TargetMachine, the O3 pipeline and PTX printing (see nvptx_compiler.hpp).
#include "runtime/codegen/nvptx_compiler.hpp"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Triple.h>

#include <chrono>
#include <cstdio>
#include <tg/core/error.hpp>
#include <tg/device.hpp>
#include <tg/log.hpp>

#include "runtime/codegen/byte_words.hpp"
#include "runtime/codegen/target_emit.hpp"

namespace tg::codegen {

namespace {

constexpr const char* cuda_triple = "nvptx64-nvidia-cuda";
// PTX ISA 7.8 (CUDA 11.8) is the first with sm_90; drivers from then on load it for every
// architecture here (PTX ISA, "Release Notes").
constexpr const char* ptx_version = "+ptx78";

}  // namespace

std::string nvptx_arch_for(int major, int minor) {
  if (major < 7) throw usage_error(str("NV: compute capability ", major, ".", minor, " is older than 7.0 (Volta)"));
  if (major > 9 || (major == 9 && minor > 0)) return "sm_90";
  if (major == 8 && minor > 9) return "sm_89";
  if (major == 7 && minor > 5) return "sm_75";
  return str("sm_", major, minor);
}

nvptx_compiler::nvptx_compiler(const std::string& arch) : arch_(arch) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(cuda_triple, error);
  if (target == nullptr) throw usage_error(str("nvptx: LLVM has no NVPTX target: ", error));
  // Asked first, so that LLVM does not warn about an unknown processor and carry on.
  const std::unique_ptr<llvm::MCSubtargetInfo> probe(target->createMCSubtargetInfo(cuda_triple, "", ""));
  if (!probe || !probe->isCPUStringValid(arch))
    throw usage_error(str("nvptx: '", arch, "' is not a PTX architecture LLVM 19 knows"));
  target_.reset(target->createTargetMachine(llvm::Triple(cuda_triple).str(), arch, ptx_version, llvm::TargetOptions(),
                                            std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (target_ == nullptr) throw usage_error(str("nvptx: LLVM cannot target '", arch, "'"));
}

nvptx_compiler::~nvptx_compiler() = default;

void nvptx_compiler::prepare(llvm::Module& module) const {
  module.setTargetTriple(cuda_triple);
  module.setDataLayout(target_->createDataLayout());
}

std::string nvptx_compiler::compile(llvm::Module& module, const std::string& kernel) {
  std::lock_guard<std::mutex> guard(lock_);
  const emitted ptx = optimize_and_emit(module, *target_, arch_, llvm::CodeGenFileType::AssemblyFile, "nvptx", kernel,
                                        [](llvm::Module& m) { rewrite_byte_vectors(m, byte_word_target::nvptx); });
  if (debug_level() >= 1) {
    char line[200];
    std::snprintf(line, sizeof line, "nvptx: %s for %s: IR passes %.1f ms, backend %.1f ms, %zu bytes of PTX",
                  kernel.c_str(), arch_.c_str(), ptx.ir_ms, ptx.backend_ms, ptx.bytes.size());
    log(log_level::debug, line);
  }
  if (debug_level() >= 4) log(log_level::debug, std::string(ptx.bytes.data(), ptx.bytes.size()));
  return std::string(ptx.bytes.data(), ptx.bytes.size());
}

}  // namespace tg::codegen
