// target_emit.hpp: what both GPU compilers (amdgpu_compiler.hpp, nvptx_compiler.hpp) do with a
// rendered module before their own last step (AMDGPU: link a code object; NVPTX: nothing more):
// verify it, give its kernels the target's processor and features, run the O3 pipeline
// (o3_pipeline.hpp; TG_DEBUG=3 prints the optimised IR), and emit it as an object or assembly file.
#pragma once
#include <llvm/ADT/SmallVector.h>
#include <llvm/Target/TargetMachine.h>

#include <string>

namespace llvm {
class Module;
}

namespace tg::codegen {

struct emitted {
  llvm::SmallVector<char, 0> bytes;  // the object file, or the assembly text
  double ir_ms = 0, backend_ms = 0;  // for TG_DEBUG=1
};

// `who` names the compiler in messages ("amdgpu", "nvptx"); device_error for IR that does not
// verify (a tg bug) or a target that cannot emit the file type. `after_o3`, where given, rewrites
// the optimised module before emission (byte_words.hpp).
emitted optimize_and_emit(llvm::Module& module, llvm::TargetMachine& target, const std::string& processor,
                          llvm::CodeGenFileType type, const char* who, const std::string& kernel,
                          void (*after_o3)(llvm::Module&) = nullptr);

}  // namespace tg::codegen
