// backend.hpp: what a kind of device provides to the runtime (tinygrad's Compiled: an
// allocator, a compiler and a program runtime). Every backend fills the same slots.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>
#include <tg/ast/node.hpp>

namespace tg {

// One kernel to compile: its AST and how many of its ranges are output loops.
struct kernel_source {
  std::span<const ast::node> nodes;
  int global_ranges = 0;
  std::string name;
  // A loop shape from the kernel's author (ast::kernel::upcast); empty: the backend decides.
  std::vector<int> upcast = {};
  bool vector_lanes = true;
};

// A compiled kernel, launched with one pointer per buffer slot and the variable values.
class program {
 public:
  virtual ~program() = default;
  virtual void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) = 0;
};

class backend {
 public:
  virtual ~backend() = default;
  virtual std::string name() const = 0;
  virtual void* allocate(std::size_t size_bytes) = 0;
  virtual void release(void* memory) = 0;
  virtual void copy_in(void* device_dst, const void* host_src, std::size_t size_bytes) = 0;
  virtual void copy_out(void* host_dst, const void* device_src, std::size_t size_bytes) = 0;
  virtual std::shared_ptr<program> compile(const kernel_source& source) = 0;
  virtual void synchronize() = 0;
  // True when kernels can read host memory directly (the CPU): then device::borrow_host
  // wraps host memory (an mmap'd model file) without a copy.
  virtual bool reads_host_memory() const { return false; }
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
