// orc_jit.hpp: LLVM's ORC LLJIT for the host: optimise a module for this CPU (O3, with the
// vector extensions of its cpu_target) and return the address of a function in it.
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "drivers/cpu/cpu_target.hpp"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
namespace orc { class LLJIT; }
}  // namespace llvm

namespace tg::cpu {

class orc_jit {
 public:
  // The host at its target (host_cpu_target(): TG_CPU_FEATURES applied) unless given one.
  explicit orc_jit(const cpu_target& target = host_cpu_target());
  ~orc_jit();
  // Prepares a module for this JIT's target (data layout, triple, CPU features).
  void prepare(llvm::Module& module) const;
  // Optimises and compiles the module; returns the address of `function`.
  void* compile(std::unique_ptr<llvm::LLVMContext> context, std::unique_ptr<llvm::Module> module,
                const std::string& function, bool print_ir);

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::unique_ptr<llvm::TargetMachine> target_;
  bool mask_registers_ = false;  // AVX-512 BW: lane tests of one word's bits become kmov (x86_bit_masks.hpp)
  std::mutex lock_;
};

}  // namespace tg::cpu
