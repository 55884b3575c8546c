// amdgpu_compiler.hpp: LLVM IR -> an AMDGPU code object, in process (no llc or ld.lld processes):
// LLVM's AMDGPU TargetMachine for one processor ("gfx1100", "gfx1200", ...; wave32), the O3 IR
// pipeline, the backend to an ELF relocatable object, and lld's library linking it into a code
// object (amdgpu_linker.hpp).
//
// The IR pipeline matters beyond speed: its AMDGPU attributor proves which implicit inputs a
// kernel does not use (amdgpu-no-dispatch-ptr, -no-implicitarg-ptr, ...), so the descriptor asks
// only for the kernarg pointer and the kernarg segment holds only the explicit arguments.
//
//   tg::codegen::amdgpu_compiler c("gfx1100");
//   auto m = std::make_unique<llvm::Module>("k", ctx);
//   c.prepare(*m);
//   tg::codegen::emit_amdgpu_kernel(*m, "k", nodes, global_ranges, 256);
//   std::vector<std::byte> elf = c.compile(*m, "k");   // for tg::amd::code_object
#pragma once
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tg::codegen {

class amdgpu_compiler {
 public:
  // usage_error when LLVM has no AMDGPU target or does not know `processor`.
  explicit amdgpu_compiler(const std::string& processor);
  ~amdgpu_compiler();

  const std::string& processor() const { return processor_; }
  // Sets the module's triple (amdgcn-amd-amdhsa) and data layout.
  void prepare(llvm::Module& module) const;
  // Verifies, optimises, compiles and links `module`; returns the code object's bytes. TG_DEBUG=1
  // logs the time of the IR passes, the backend and the link, and the code object's size;
  // TG_DEBUG=3 the optimised IR.
  std::vector<std::byte> compile(llvm::Module& module, const std::string& kernel);

 private:
  std::string processor_;
  std::unique_ptr<llvm::TargetMachine> target_;
  std::mutex lock_;  // one compilation at a time on the shared TargetMachine
};

}  // namespace tg::codegen
