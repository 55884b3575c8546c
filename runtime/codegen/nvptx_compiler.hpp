// nvptx_compiler.hpp: LLVM IR -> PTX text, in process: LLVM's NVPTX TargetMachine for one
// architecture ("sm_80" .. "sm_90"), the O3 pipeline (o3_pipeline.hpp) and the backend's assembly
// printer. The CUDA driver compiles the PTX for the card when the module is loaded
// (drivers/nv: cuModuleLoadDataEx), so no CUDA toolkit is needed at build or run time.
//
//   tg::codegen::nvptx_compiler c("sm_90");
//   c.prepare(*module);
//   tg::codegen::emit_nvptx_kernel(*module, "k", nodes, global_ranges, 256, opts);
//   std::string ptx = c.compile(*module, "k");
#pragma once
#include <memory>
#include <mutex>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tg::codegen {

// The PTX architecture for a compute capability: sm_<major><minor> for the ones LLVM 19 knows
// from 7.0 on; newer cards take sm_90's PTX, which their driver compiles forward. usage_error below 7.0.
std::string nvptx_arch_for(int major, int minor);

class nvptx_compiler {
 public:
  // usage_error when LLVM has no NVPTX target or does not know `arch`.
  explicit nvptx_compiler(const std::string& arch);
  ~nvptx_compiler();

  const std::string& arch() const { return arch_; }
  void prepare(llvm::Module& module) const;  // triple nvptx64-nvidia-cuda and the data layout
  // Verifies, optimises and prints `module` as PTX. TG_DEBUG=1 logs the times; TG_DEBUG=3 the IR; TG_DEBUG=4 the PTX too.
  std::string compile(llvm::Module& module, const std::string& kernel);

 private:
  std::string arch_;
  std::unique_ptr<llvm::TargetMachine> target_;
  std::mutex lock_;  // one compilation at a time on the shared TargetMachine
};

}  // namespace tg::codegen
