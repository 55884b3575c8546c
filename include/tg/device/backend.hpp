// backend.hpp: what a kind of device provides to the runtime (tinygrad's Compiled: an
// allocator, a renderer and compiler, and a program runtime). Every backend fills the same slots:
// memory and copies here, and for compiling kernels a kernel_compiler (the target's traits, a
// renderer to LLVM IR, a compiler to a program: runtime/device/kernel_compiler.hpp), which the
// run-time pipeline drives (runtime/device/pipeline.hpp lists its steps).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>
#include <tg/ast/node.hpp>

namespace tg {

class kernel_compiler;  // runtime/device/kernel_compiler.hpp

// One kernel to compile: its AST and how many of its ranges are output loops.
struct kernel_source {
  std::span<const ast::node> nodes;
  int global_ranges = 0;
  std::string name;
  // A loop shape from the kernel's author (ast::kernel::upcast); empty: the backend decides.
  std::vector<int> upcast = {};
  bool vector_lanes = true;
  int panel = 0;  // with upcast: panels of the last output range (CPU; codegen::kernel_opts::panel)
  // A GPU schedule from tuning (runtime/tune; codegen::kernel_opts says what each means): with
  // group_lanes >= 1, GPUs take it and `upcast` instead of their heuristic's; 0: they decide.
  int group_lanes = 0, reduce_unroll = 1, nested_lanes = 1;
};

// Kernels to launch as one (device::prepare_fused): each part's AST with its variables replaced by
// the values it was prepared for (its grid is then fixed), and its buffer slots; a launch passes
// the parts' slots one after another. `bound`: the variables (index, value) the parts read before
// they were specialised; a launch with other values is refused (usage_error), never run wrongly.
struct fused_source {
  std::vector<kernel_source> parts;
  std::vector<int> slot_counts;
  std::vector<std::pair<std::size_t, std::int64_t>> bound;
  std::string name;
};

// A compiled kernel, launched with one pointer per buffer slot and the variable values.
class program {
 public:
  virtual ~program() = default;
  virtual void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) = 0;
  // What the backend made of the kernel, for -v listings (the CPU: the ISA form its int8 dot
  // products took); empty where a backend says nothing.
  virtual std::string describe() const { return {}; }
};

// ---- Graphs: what tg::graph_builder (include/tg/graph.hpp, runtime/jit) hands a backend.
// A launch argument taken from a replay parameter: launch `launch`'s buffer slot or variable
// `slot` gets parameter `param` (for a variable, its value + `offset`).
struct graph_binding {
  std::size_t launch = 0, slot = 0, param = 0;
  std::int64_t offset = 0;
};

// One captured launch: its program and its arguments at capture (a parameter's slot holds the
// parameter's initial buffer or value).
struct graph_launch {
  std::shared_ptr<program> compiled;
  std::vector<void*> buffers;
  std::vector<std::int64_t> vars;
};

struct graph_capture {
  std::vector<graph_launch> launches;
  std::vector<graph_binding> var_bindings, buffer_bindings;  // in launch order
  std::size_t var_params = 0, buffer_params = 0;
};

// A captured graph made executable by its backend. replay gets one value per variable parameter
// and one pointer per buffer parameter (tg::graph checked counts, sizes and devices), launches
// everything in capture order and, like launch, may return before the work is done.
class executable_graph {
 public:
  virtual ~executable_graph() = default;
  virtual void replay(std::span<const std::int64_t> vars, std::span<void* const> buffers) = 0;
};

// Transfers over a link that costs a round trip per transfer (the USB bridge an AMD GPU sits
// behind: each control or bulk transfer takes tens of microseconds however small), counted
// since the device opened.
struct link_counts {
  std::uint64_t transfers = 0;
  std::uint64_t bytes_out = 0, bytes_in = 0;
  // Of the transfers, the reads made while the host waited for the GPU (polling a signal): how
  // many depends on how long the GPU took, not on the work submitted.
  std::uint64_t waiting = 0;
};

// Times launches one by one: start() before a launch, stop() after it, finish() once a batch of
// them is queued. The default (the CPU, AMD) waits for the device in stop() and reads the host's
// clock; a backend with a clock of its own (NV: CUDA events) records marks in its queue and
// waits only in finish(), so the launches run back to back as they would unprofiled, and a
// kernel of a few microseconds is not swamped by the host's cost of a launch and a wait.
class launch_timer {
 public:
  virtual ~launch_timer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  // Waits for the device: the seconds of each start-stop span since the last finish, in order.
  virtual std::vector<double> finish() = 0;
};

class backend {
 public:
  virtual ~backend() = default;
  virtual std::string name() const = 0;
  virtual void* allocate(std::size_t size_bytes) = 0;
  virtual void release(void* memory) = 0;
  virtual void copy_in(void* device_dst, const void* host_src, std::size_t size_bytes) = 0;
  virtual void copy_out(void* host_dst, const void* device_src, std::size_t size_bytes) = 0;
  // The run-time pipeline's slots for this device's kernels; nullptr: it compiles none.
  virtual kernel_compiler* compiler() { return nullptr; }
  // The kernel through the pipeline's opts, render and compile steps on compiler()
  // (runtime/device/pipeline.cpp); usage_error when the backend compiles no kernels.
  virtual std::shared_ptr<program> compile(const kernel_source& source);
  // The parts as one program, launched as one dispatch (runtime/device/pipeline.cpp: each part's
  // opts as compile's, then the compiler's render_fused); nullptr where the backend cannot fuse
  // kernels (the caller launches them one by one).
  virtual std::shared_ptr<program> compile_fused(const fused_source& source);
  virtual void synchronize() = 0;
  // A timer for per-kernel profiles (llm -v); see launch_timer. The default times on the host.
  virtual std::unique_ptr<launch_timer> make_launch_timer();
  // True when kernels can read host memory directly (the CPU): then device::borrow_host
  // wraps host memory (an mmap'd model file) without a copy.
  virtual bool reads_host_memory() const { return false; }
  // A graph of launches of this backend's programs. The default (runtime/jit/launch_list.cpp)
  // launches each program in turn from argument arrays prepared at capture.
  virtual std::unique_ptr<executable_graph> make_graph(const graph_capture& capture);
  // Bytes that allocate can still hand out, with what mapping them costs (page tables) already
  // taken off; nullopt where the backend cannot say (the CPU: host memory). For planning
  // before a large load (llm/model/memory_plan.hpp); fragmentation may leave less in one piece.
  virtual std::optional<std::uint64_t> free_bytes() const { return std::nullopt; }
  // What went over such a link so far; nullopt where the device is reached without one (the CPU,
  // a GPU on PCI).
  virtual std::optional<link_counts> link_traffic() const { return std::nullopt; }
};

// How to open a device, apart from its name. Zero and empty mean the default.
struct device_options {
  int threads = 0;           // CPU: worker threads; 0: $TG_THREADS, else one per hardware thread
  std::string firmware_dir;  // AMD: where the GPU's firmware images are; "": $TG_AMD_FIRMWARE, else the default
};

// Backends register by name ("CPU", "AMD", "AMD:EMU"). A device name picks the registration
// with the longest matching prefix that ends at a ':' and passes the rest as `args`:
// "AMD:EMU:gfx12" -> "AMD:EMU" with "gfx12"; "AMD:USB:0" -> "AMD" with "USB:0".
using backend_factory = std::function<std::shared_ptr<backend>(const std::string& args, const device_options& options)>;
void register_backend(const std::string& name, backend_factory factory);
std::vector<std::string> registered_backends();

// Registers a backend from a static object in the backend's .cpp file.
struct backend_registration {
  backend_registration(const std::string& name, backend_factory factory) { register_backend(name, std::move(factory)); }
};

}  // namespace tg
