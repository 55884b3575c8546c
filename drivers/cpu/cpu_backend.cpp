// cpu_backend.cpp: the "CPU" device: host memory, kernels compiled by LLVM through ORC (the
// run-time pipeline's render and compile slots, cpu_compiler below), and the outermost output loop
// split across a thread pool when there is enough work.
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include "runtime/codegen/llvm_kernel.hpp"
#include "runtime/device/kernel_compiler.hpp"
#include "runtime/jit/graph_arguments.hpp"
#include <tg/device/backend.hpp>
#include <tg/device.hpp>
#include "runtime/opt/heuristic.hpp"
#include <tg/core/error.hpp>
#include "drivers/cpu/cpu_target.hpp"
#include "drivers/cpu/orc_jit.hpp"
#include <tg/log.hpp>
#include "runtime/threads/thread_pool.hpp"
#include "runtime/tune/tuned_compile.hpp"

namespace tg::cpu {
namespace {

using threads::thread_pool;

using kernel_fn = void (*)(void* const*, const std::int64_t*, std::int64_t, std::int64_t);

// Below this many loop iterations in total a kernel runs on one thread.
constexpr std::int64_t min_parallel_work = 1 << 15;

class cpu_program final : public program {
 public:
  cpu_program(kernel_fn fn, std::vector<ast::node> nodes, int global_ranges, codegen::kernel_opts opts, thread_pool& pool,
              std::string form)
      : fn_(fn), nodes_(std::move(nodes)), global_ranges_(global_ranges), opts_(std::move(opts)), pool_(pool),
        form_(std::move(form)) {}

  std::string describe() const override { return form_; }

  void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) override {
    run(buffers, vars, measure_launch(vars));
  }

  // launch in two steps, so a graph (cpu_graph) measures a launch whose variables are fixed once.
  opt::launch_shape measure_launch(std::span<const std::int64_t> vars) const {
    return opt::measure(nodes_, global_ranges_, opts_, vars);
  }
  void run(std::span<void* const> buffers, std::span<const std::int64_t> vars, const opt::launch_shape& shape) {
    std::int64_t trips = shape.outer_trips;
    if (global_ranges_ == 0 || trips < 2 || shape.total_work < min_parallel_work || pool_.size() == 1) {
      fn_(buffers.data(), vars.data(), 0, trips);
      return;
    }
    // A few chunks per thread, so an uneven split evens out.
    int chunks = int(std::min<std::int64_t>(trips, pool_.size() * 4));
    pool_.parallel_for(chunks, [&](int c) {
      std::int64_t begin = trips * c / chunks, end = trips * (c + 1) / chunks;
      fn_(buffers.data(), vars.data(), begin, end);
    });
  }

 private:
  kernel_fn fn_;
  std::vector<ast::node> nodes_;
  int global_ranges_;
  codegen::kernel_opts opts_;
  thread_pool& pool_;
  std::string form_;
};

// The CPU's graph: the prepared argument arrays (runtime/jit/graph_arguments.hpp) and each
// launch's loop measurements, taken at capture unless the launch's variables are parameters.
class cpu_graph final : public executable_graph {
 public:
  explicit cpu_graph(const graph_capture& c) : args_(c) {
    for (std::size_t i = 0; i < c.launches.size(); ++i) {
      // Under TG_BEAM a kernel not launched yet is a searching wrapper: search now, and capture
      // the program it settles on (runtime/tune/tuned_compile.hpp).
      std::shared_ptr<program> compiled = tune::resolve_tuned(c.launches[i].compiled, args_.vars(i));
      auto* p = dynamic_cast<cpu_program*>(compiled.get());
      if (p == nullptr) throw usage_error(str("CPU: graph launch ", i, ": the kernel was not compiled for the CPU device"));
      steps_.push_back({p, p->measure_launch(args_.vars(i))});
      programs_.push_back(std::move(compiled));
    }
  }

  void replay(std::span<const std::int64_t> vars, std::span<void* const> buffers) override {
    args_.apply(vars, buffers);
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      step& s = steps_[i];
      if (args_.has_var_params(i)) s.shape = s.program->measure_launch(args_.vars(i));
      s.program->run(args_.buffers(i), args_.vars(i), s.shape);
    }
  }

 private:
  struct step {
    cpu_program* program;
    opt::launch_shape shape;
  };
  jit::graph_arguments args_;
  std::vector<step> steps_;
  std::vector<std::shared_ptr<program>> programs_;  // keeps the steps' programs alive
};

// Whether the emitted module calls vpmaddubsw: quad sums without VNNI take it only where LLVM's
// known bits prove the unsigned bytes below 128 (x86_dot_sums.cpp), so the IR says which form won.
bool calls_pmaddubsw(const llvm::Module& module) {
  return std::any_of(module.begin(), module.end(), [](const llvm::Function& f) {
    const llvm::StringRef name = f.getName();
    return f.isDeclaration() && !f.use_empty() &&
           (name.starts_with("llvm.x86.avx2.pmadd.ub.sw") || name.starts_with("llvm.x86.avx512.pmaddubs.w"));
  });
}

// What a kernel's int8 dot products become on this target, for TG_DEBUG=1 and -v: pair sums
// of 16-bit products (the int8 matmuls) are pmaddwd, folded into vpdpwssd with VNNI; quad
// sums of bytes are vpdpbusd with VNNI, else vpmaddubsw + vpmaddwd where the bytes allow
// (x86_dot_sums.cpp: x86_quad_sums), else generic code.
std::string isa_form(std::span<const ast::node> nodes, const codegen::kernel_opts& opts, const cpu_target& target,
                     const llvm::Module& module) {
  bool pairs = false, quads = false;
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::reduce_sum || n.arg != ast::reduce_as_lanes || is_float(n.dt)) continue;
    const ast::node& bound = nodes[std::size_t(nodes[std::size_t(n.src[1])].src[0])];
    (bound.o == ast::op::constant && bound.arg == 4 ? quads : pairs) = true;
  }
  const int vector = opts.vector_lanes && !opts.upcast.empty() ? opts.upcast.back() : 0;
  std::string form = str(target.level == "native" ? "native (" + target.cpu + ")" : target.level, ", ", target.vector_bits, "-bit");
  if (pairs) form += target.vnni ? ", int8 dot vpdpwssd" : ", int8 dot vpmaddwd+vpaddd";
  if (quads) form += target.vnni && target.vector_bits == 512 ? ", int8 dot vpdpbusd"
                     : calls_pmaddubsw(module)                   ? ", int8 dot vpmaddubsw+vpmaddwd"
                                                                 : ", int8 quad dot (generic)";
  if (vector > 1) form += str(", ", vector, " output lanes per vector");
  if (std::count_if(opts.upcast.begin(), opts.upcast.end(), [](int u) { return u > 1; }) >= 2) {  // a 2-D register tile
    std::string tile;
    for (int u : opts.upcast) tile += (tile.empty() ? "" : "x") + std::to_string(u);
    form += ", register tile " + tile;
  }
  if (opts.panel > 0) form += str(", panels of ", opts.panel);
  return form;
}

int thread_count(const device_options& options) {
  if (options.threads < 0) throw usage_error(str("device 'CPU': ", options.threads, " threads (give 1 or more, or 0 for the default)"));
  if (options.threads > 0) return options.threads;
  return threads::default_thread_count();
}

// The CPU's slots of the run-time pipeline (runtime/device/pipeline.hpp): the host's ISA as the
// target's traits, the CPU renderer (codegen/llvm_kernel.hpp), and ORC's compiler.
class cpu_compiler final : public kernel_compiler {
 public:
  cpu_compiler(const cpu_target& target, thread_pool& pool) : target_(target), jit_(target), pool_(pool) {
    traits_.isa = target.isa();
  }
  const opt::target_traits& traits() const override { return traits_; }

  std::unique_ptr<rendered_kernel> render(const kernel_source& source, const codegen::kernel_opts& opts) override {
    auto r = std::make_unique<rendered_kernel>();
    begin_render(*r, source, opts);
    jit_.prepare(*r->module);
    r->symbol = source.name + "_" + std::to_string(counter_++);
    codegen::emit_kernel(*r->module, r->symbol, source.nodes, source.global_ranges, opts);
    return r;
  }

  std::shared_ptr<program> compile(std::unique_ptr<rendered_kernel> r) override {
    std::string form = isa_form(r->nodes, r->opts, target_, *r->module);
    if (debug_level() >= 1) log(log_level::debug, str("cpu: ", r->name, ": ", form));
    void* fn = jit_.compile(std::move(r->context), std::move(r->module), r->symbol, debug_level() >= 3);
    return std::make_shared<cpu_program>(reinterpret_cast<kernel_fn>(fn), std::move(r->nodes), r->global_ranges,
                                         std::move(r->opts), pool_, std::move(form));
  }

 private:
  const cpu_target& target_;
  opt::target_traits traits_;
  orc_jit jit_;
  thread_pool& pool_;
  std::atomic<int> counter_{0};
};

class cpu_backend final : public backend {
 public:
  explicit cpu_backend(int threads) : target_(host_cpu_target()), pool_(threads), compiler_(target_, pool_) {
    if (debug_level() >= 1) log(log_level::debug, str("cpu: ", target_.describe()));
  }
  std::string name() const override { return "CPU"; }
  void* allocate(std::size_t size_bytes) override {
    void* p = std::aligned_alloc(64, (size_bytes + 63) / 64 * 64);
    if (p == nullptr) throw device_error(str("CPU: out of host memory allocating ", size_bytes, " bytes"));
    return p;
  }
  void release(void* memory) override { std::free(memory); }
  void copy_in(void* dst, const void* src, std::size_t n) override { std::memcpy(dst, src, n); }
  void copy_out(void* dst, const void* src, std::size_t n) override { std::memcpy(dst, src, n); }
  void synchronize() override {}
  bool reads_host_memory() const override { return true; }
  std::unique_ptr<executable_graph> make_graph(const graph_capture& c) override { return std::make_unique<cpu_graph>(c); }
  kernel_compiler* compiler() override { return &compiler_; }

 private:
  const cpu_target& target_;
  thread_pool pool_;
  cpu_compiler compiler_;
};

// One CPU backend per thread count: the JIT and the threads are shared by every tg::device("CPU")
// that asks for as many threads.
const backend_registration cpu_registration("CPU", [](const std::string& args, const device_options& options) {
  if (!args.empty()) throw usage_error(str("device 'CPU:", args, "': the CPU device takes no arguments"));
  static std::mutex lock;
  static std::map<int, std::shared_ptr<backend>> by_threads;
  const int threads = thread_count(options);
  std::lock_guard guard(lock);
  std::shared_ptr<backend>& shared = by_threads[threads];
  if (!shared) shared = std::make_shared<cpu_backend>(threads);
  return shared;
});

}  // namespace
}  // namespace tg::cpu
