// o3_pipeline.hpp: LLVM's standard O3 module pipeline for a target machine, the one optimisation
// both renderers' modules go through (the CPU JIT: loop and SLP vectorizers, unrolling, LICM;
// AMDGPU: the same plus the target's passes, the attributor among them, which drops unused
// implicit kernel inputs). Included only by the two compilers, which link LLVM already.
#pragma once
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

namespace tg::codegen {

inline void run_o3_pipeline(llvm::Module& module, llvm::TargetMachine& target) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&target);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, mam);
}

}  // namespace tg::codegen
