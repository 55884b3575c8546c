// orc_jit.cpp: LLJIT set-up, the O3 pipeline, and lookups.
#include "drivers/cpu/orc_jit.hpp"
#include "runtime/codegen/o3_pipeline.hpp"
#include "runtime/codegen/x86_bit_masks.hpp"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <tg/core/error.hpp>
#include <tg/log.hpp>

namespace tg::cpu {
namespace {

template <class T>
T take(llvm::Expected<T> value, const char* what) {
  if (!value) throw device_error(str("jit: ", what, ": ", llvm::toString(value.takeError())));
  return std::move(*value);
}

}  // namespace

orc_jit::orc_jit(const cpu_target& target) : mask_registers_(target.vector_bits >= 512) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // The host, with the target's features (a level below the host's drops the rest).
  llvm::orc::JITTargetMachineBuilder builder{llvm::Triple(llvm::sys::getProcessTriple())};
  builder.setCPU(target.cpu);
  builder.addFeatures(target.features);
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  target_ = take(builder.createTargetMachine(), "creating the target machine");
  jit_ = take(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(builder).create(), "creating LLJIT");
  // Kernels call libm (sinf, exp2f) and compiler-rt helpers from this process.
  auto symbols = take(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                          jit_->getDataLayout().getGlobalPrefix()), "reading process symbols");
  jit_->getMainJITDylib().addGenerator(std::move(symbols));
}

orc_jit::~orc_jit() = default;

void orc_jit::prepare(llvm::Module& module) const {
  module.setDataLayout(jit_->getDataLayout());
  module.setTargetTriple(target_->getTargetTriple().str());
}

void* orc_jit::compile(std::unique_ptr<llvm::LLVMContext> context, std::unique_ptr<llvm::Module> module,
                       const std::string& function, bool print_ir) {
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(*module, &problem_stream))
    throw device_error(str("jit: kernel ", function, " is invalid LLVM IR (a tg bug): ", problems));
  for (llvm::Function& f : *module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", target_->getTargetCPU());
    f.addFnAttr("target-features", target_->getTargetFeatureString());
  }
  codegen::run_o3_pipeline(*module, *target_);  // loop and SLP vectorizers, unrolling, LICM
  if (mask_registers_) codegen::rewrite_bit_test_masks(*module);  // kmov for lane-bit tests (Q5 fifth bits)
  if (print_ir) {
    std::string text;
    llvm::raw_string_ostream out(text);
    module->print(out, nullptr);
    log(log_level::debug, text);
  }
  std::lock_guard<std::mutex> guard(lock_);
  if (auto err = jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
    throw device_error(str("jit: adding kernel ", function, ": ", llvm::toString(std::move(err))));
  auto address = take(jit_->lookup(function), "looking up the compiled kernel");
  return address.toPtr<void*>();
}

}  // namespace tg::cpu
