// target_emit.cpp: verify, O3 and emission for a GPU target machine (see target_emit.hpp).
#include "runtime/codegen/target_emit.hpp"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>
#include <tg/core/error.hpp>
#include <tg/device.hpp>
#include <tg/log.hpp>

#include "runtime/codegen/o3_pipeline.hpp"

namespace tg::codegen {

namespace {
double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

emitted optimize_and_emit(llvm::Module& module, llvm::TargetMachine& target, const std::string& processor,
                          llvm::CodeGenFileType type, const char* who, const std::string& kernel,
                          void (*after_o3)(llvm::Module&)) {
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(module, &problem_stream))
    throw device_error(str(who, ": kernel ", kernel, " is invalid LLVM IR (a tg bug): ", problems));
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", processor);
    f.addFnAttr("target-features", target.getTargetFeatureString());
  }
  emitted out;
  const auto start = std::chrono::steady_clock::now();
  run_o3_pipeline(module, target);  // with the target's own passes
  if (after_o3 != nullptr) after_o3(module);
  out.ir_ms = ms_since(start);
  if (debug_level() >= 3) {
    std::string text;
    llvm::raw_string_ostream ir(text);
    module.print(ir, nullptr);
    log(log_level::debug, text);
  }
  const auto backend_start = std::chrono::steady_clock::now();
  {
    llvm::raw_svector_ostream file(out.bytes);
    llvm::legacy::PassManager passes;
    if (target.addPassesToEmitFile(passes, file, nullptr, type))
      throw device_error(str(who, ": LLVM cannot emit ", type == llvm::CodeGenFileType::ObjectFile ? "an object file" : "assembly",
                             " for ", processor));
    passes.run(module);
  }
  out.backend_ms = ms_since(backend_start);
  return out;
}

}  // namespace tg::codegen
