// device.hpp: the runtime's public face: a device by name, buffers on it, compiling and
// launching kernels, and running a whole plan from tg::lower.
//
//   tg::device cpu("CPU");
//   tg::host_tensor y = cpu.run(plan, {{"a", a_host}, {"b", b_host}});
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <tg/ast/kernel_builder.hpp>
#include <tg/ast/plan.hpp>
#include <tg/device/backend.hpp>
#include <tg/device/host_data.hpp>

namespace tg {

// Memory on a device; freed when the last copy goes.
class buffer {
 public:
  buffer() = default;
  buffer(std::shared_ptr<backend> owner, std::size_t size_bytes);
  // Host memory the device reads in place; the caller keeps it alive and unchanged.
  static buffer borrowed(std::shared_ptr<backend> owner, void* host, std::size_t size_bytes);
  void* data() const { return state_ ? state_->memory : nullptr; }
  std::size_t size_bytes() const { return state_ ? state_->size : 0; }
  void copy_in(const void* host, std::size_t size_bytes);
  void copy_out(void* host, std::size_t size_bytes) const;
  // The backend it lives on (graphs check that a buffer belongs to their device).
  const backend* owner() const { return state_ ? state_->owner.get() : nullptr; }

 private:
  struct state {
    std::shared_ptr<backend> owner;
    void* memory = nullptr;
    std::size_t size = 0;
    bool owned = true;
    ~state() { if (memory && owned) owner->release(memory); }
  };
  std::shared_ptr<state> state_;
};

// A hand-built kernel compiled for one device, launched without looking it up in the
// device's cache again: for code that launches the same kernel many times (a model's layers,
// every token). Launches give the same results as device::launch.
//
//   tg::prepared_kernel k = cpu.prepare(kb.finish());
//   for (int i = 0; i < 100; ++i) k.launch(std::vector<tg::buffer>{out, in});
class prepared_kernel {
 public:
  prepared_kernel() = default;
  prepared_kernel(std::shared_ptr<program> compiled, int slot_count)
      : program_(std::move(compiled)), slot_count_(slot_count) {}
  explicit operator bool() const { return program_ != nullptr; }
  int slot_count() const { return slot_count_; }
  // Buffers, one per slot, and the variable values; throws usage_error on a wrong count.
  void launch(std::span<const buffer> buffers, std::span<const std::int64_t> vars = {}) const;
  // The compiled program (graphs capture it).
  const std::shared_ptr<program>& compiled() const { return program_; }
  // What the backend made of it (program::describe), for -v listings.
  std::string describe() const;

 private:
  std::shared_ptr<program> program_;
  int slot_count_ = 0;
};

// What a device's kernel cache has done (for tests and -v output).
struct device_stats {
  int compiled = 0;     // kernels compiled (generic and specialized)
  int specialized = 0;  // (kernel, binding) pairs given their own specialized kernel
};

class device {
 public:
  // "CPU", or a registered backend name with arguments after ':' ("AMD:EMU").
  explicit device(const std::string& name = "CPU", const device_options& options = {});

  const std::string& name() const { return name_; }
  backend& impl() const { return *backend_; }
  const std::shared_ptr<backend>& shared_impl() const { return backend_; }  // for what must keep it alive (graphs)
  buffer allocate(std::size_t size_bytes) { return buffer(backend_, size_bytes); }
  // Host memory as a device buffer: borrowed in place where the device reads host memory
  // (CPU), else copied into a new device buffer.
  buffer borrow_host(const void* host, std::size_t size_bytes);
  // Compiled kernels are cached by AST, so a kernel compiles once per process and device.
  std::shared_ptr<program> compile(const kernel_source& source);
  void synchronize() { backend_->synchronize(); }
  device_stats stats() const;

  // Runs every kernel of a plan: binds inputs by name and symbolic variables by name,
  // checks sizes and dtypes, returns the output.
  host_tensor run(const plan_view& plan, std::initializer_list<named_input> inputs,
                  std::initializer_list<var_binding> vars = {});
  template <class Plan> requires requires(const Plan& p) { p.view(); }
  host_tensor run(const Plan& plan, std::initializer_list<named_input> inputs, std::initializer_list<var_binding> vars = {}) {
    return run(plan.view(), inputs, vars);
  }
  host_tensor run(const plan_view& plan, std::span<const named_input> inputs, std::span<const var_binding> vars);

  // Launches a hand-built kernel (tg::kernel_builder) on buffers, one per slot.
  void launch(const ast::kernel& kernel, std::span<const buffer> buffers, std::span<const std::int64_t> vars = {});
  // Compiles a hand-built kernel now (or takes it from the cache) for launching many times.
  prepared_kernel prepare(const ast::kernel& kernel);
  // Independent kernels as one launch (on AMD GPUs one dispatch: their costs of a launch paid
  // once), each specialised to the variable values `vars` (what a launch passes; only those it
  // was prepared for are accepted, usage_error otherwise). A launch takes the kernels' buffer
  // slots one after another. No kernel may write what another reads. An empty prepared_kernel
  // where the device does not fuse kernels (the CPU): launch them one by one.
  prepared_kernel prepare_fused(std::span<const ast::kernel* const> kernels, std::span<const std::int64_t> vars);

 private:
  // The generic kernel, or after a binding repeats, one specialized to its values.
  std::shared_ptr<program> compile_for(const kernel_source& source, std::span<const std::int64_t> vars);

  std::string name_;
  std::shared_ptr<backend> backend_;
  struct cache;
  std::shared_ptr<cache> cache_;
};

// Debug level from TG_DEBUG (or set_debug): 1 kernels and times, 2 + ASTs, 3 + LLVM IR.
int debug_level();
void set_debug(int level);

// A readable kernel name from its ranges: E_64_16 (elementwise), r_64_16_32 (with reduce), a run
// of 4 or more equal bounds as one: r_2048_32_1_8_1_4x64.
std::string kernel_name(std::span<const ast::node> nodes, int global_ranges);

}  // namespace tg
