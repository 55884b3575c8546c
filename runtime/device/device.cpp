// device.cpp: the backend registry, buffers, the kernel cache and running a plan.
#include <tg/device.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <tg/ast/hash.hpp>
#include <tg/ast/print.hpp>
#include <tg/log.hpp>
#include "runtime/opt/specialize.hpp"
#include "runtime/tune/tuned_compile.hpp"

namespace tg {
namespace {

std::map<std::string, backend_factory>& registry() {
  static std::map<std::string, backend_factory> r;
  return r;
}

int& debug_setting() {
  static int level = [] {
    const char* v = std::getenv("TG_DEBUG");
    return v ? std::atoi(v) : 0;
  }();
  return level;
}

void check_slot_count(int slot_count, std::size_t buffer_count) {
  if (std::size_t(slot_count) != buffer_count)
    throw usage_error(str("launch: the kernel uses ", slot_count, " buffer slots, ", buffer_count, " buffers given"));
}

std::string shape_text(const std::vector<std::int64_t>& shape, dtype dt) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? " x " : "") + std::to_string(shape[i]);
  return (shape.empty() ? "scalar" : s) + " " + std::string(name(dt));
}

}  // namespace

void register_backend(const std::string& name, backend_factory factory) { registry()[name] = std::move(factory); }

namespace {

class host_launch_timer final : public launch_timer {
 public:
  explicit host_launch_timer(backend& owner) : owner_(owner) {}
  void start() override { start_ = std::chrono::steady_clock::now(); }
  void stop() override {
    owner_.synchronize();
    spans_.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  std::vector<double> finish() override { return std::exchange(spans_, {}); }

 private:
  backend& owner_;
  std::chrono::steady_clock::time_point start_;
  std::vector<double> spans_;
};

}  // namespace

std::unique_ptr<launch_timer> backend::make_launch_timer() { return std::make_unique<host_launch_timer>(*this); }

std::vector<std::string> registered_backends() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

int debug_level() { return debug_setting(); }
void set_debug(int level) { debug_setting() = level; }

std::string kernel_name(std::span<const ast::node> nodes, int global_ranges) {
  bool reduces = false;
  std::vector<std::string> bounds;
  for (const ast::node& n : nodes) {
    reduces = reduces || ast::is_reduce(n.o);
    if (n.o != ast::op::range) continue;
    const ast::node& bound = nodes[std::size_t(n.src[0])];
    bounds.push_back(bound.o == ast::op::constant ? std::to_string(bound.arg) : std::string("n"));
  }
  // A run of 4 or more equal bounds as "<bound>x<count>" (a K-quant chunk matmul has 64 quad
  // reduces of 4: r_2048_32_1_8_1_4x64).
  std::string dims;
  for (std::size_t i = 0; i < bounds.size();) {
    std::size_t run = 1;
    while (i + run < bounds.size() && bounds[i + run] == bounds[i]) ++run;
    if (run >= 4) {
      dims += "_" + bounds[i] + "x" + std::to_string(run);
    } else {
      for (std::size_t k = 0; k < run; ++k) dims += "_" + bounds[i];
    }
    i += run;
  }
  return (reduces ? "r" : "E") + dims;
}

buffer::buffer(std::shared_ptr<backend> owner, std::size_t size_bytes) : state_(std::make_shared<state>()) {
  state_->owner = std::move(owner);
  state_->memory = state_->owner->allocate(size_bytes == 0 ? 1 : size_bytes);
  state_->size = size_bytes;
}
buffer buffer::borrowed(std::shared_ptr<backend> owner, void* host, std::size_t size_bytes) {
  buffer b;
  b.state_ = std::make_shared<state>();
  b.state_->owner = std::move(owner);
  b.state_->memory = host;
  b.state_->size = size_bytes;
  b.state_->owned = false;
  return b;
}

buffer device::borrow_host(const void* host, std::size_t size_bytes) {
  if (backend_->reads_host_memory()) return buffer::borrowed(backend_, const_cast<void*>(host), size_bytes);
  buffer b = allocate(size_bytes);
  b.copy_in(host, size_bytes);
  return b;
}

void buffer::copy_in(const void* host, std::size_t size_bytes) {
  if (size_bytes > this->size_bytes())
    throw usage_error(str("buffer::copy_in: ", size_bytes, " bytes do not fit a buffer of ", this->size_bytes()));
  state_->owner->copy_in(state_->memory, host, size_bytes);
}
void buffer::copy_out(void* host, std::size_t size_bytes) const {
  if (size_bytes > this->size_bytes())
    throw usage_error(str("buffer::copy_out: asked for ", size_bytes, " bytes of a buffer of ", this->size_bytes()));
  state_->owner->copy_out(host, state_->memory, size_bytes);
}

struct device::cache {
  std::mutex lock;
  struct entry {
    std::vector<ast::node> nodes;
    std::vector<int> upcast;
    bool vector_lanes;
    int panel;
    std::shared_ptr<program> compiled;
  };
  std::multimap<std::uint64_t, entry> programs;  // by hash of the AST and loop shape
  // Kernels launched as one (prepare_fused), nullptr where the backend fuses none; looked up by
  // content, there are few.
  struct fused_key {
    std::vector<ast::kernel> parts;  // each with its variables' values in place
    std::vector<std::pair<std::size_t, std::int64_t>> bound;
    bool operator==(const fused_key&) const = default;
  };
  std::vector<std::pair<fused_key, std::shared_ptr<program>>> fused;
  // Launches per (kernel, variable values): a binding seen this often gets its own kernel.
  std::map<std::pair<std::uint64_t, std::vector<std::int64_t>>, int> bindings;
  device_stats stats;
};

// A binding used this many times is compiled with its values as constants. Once would be
// wasteful for values that change every call (a decode position), which never repeat.
constexpr int specialize_after = 3;

// The most specific registration wins: for "AMD:EMU:gfx12" the whole name is tried first, then
// "AMD:EMU" (args "gfx12"), then "AMD" (args "EMU:gfx12"); each cut is at a ':'.
device::device(const std::string& name, const device_options& options) : name_(name), cache_(std::make_shared<cache>()) {
  for (std::size_t cut = name.size(); cut != std::string::npos && cut > 0; cut = name.rfind(':', cut - 1)) {
    auto it = registry().find(name.substr(0, cut));
    if (it == registry().end()) continue;
    backend_ = it->second(cut == name.size() ? std::string() : name.substr(cut + 1), options);
    return;
  }
  std::string known;
  for (const auto& n : registered_backends()) known += (known.empty() ? "" : ", ") + n;
  throw usage_error(str("device '", name, "': no such device kind (known: ", known, ")"));
}

// Steps 2 (cache) and 3 (tune) of the run-time pipeline (runtime/device/pipeline.hpp); the
// backend's compile runs opts, render and compile.
std::shared_ptr<program> device::compile(const kernel_source& source) {
  std::uint64_t h = ast::hash(source.nodes, fnv_offset ^ std::uint64_t(source.global_ranges));
  for (int u : source.upcast) h = fnv_mix(h, std::uint64_t(u));
  h ^= source.vector_lanes ? 0 : 0x9E3779B97F4A7C15ull;
  h = fnv_mix(h, std::uint64_t(source.panel));
  std::lock_guard<std::mutex> guard(cache_->lock);
  auto [first, last] = cache_->programs.equal_range(h);
  for (auto it = first; it != last; ++it)
    if (std::equal(it->second.nodes.begin(), it->second.nodes.end(), source.nodes.begin(), source.nodes.end()) &&
        it->second.upcast == source.upcast && it->second.vector_lanes == source.vector_lanes &&
        it->second.panel == source.panel)
      return it->second.compiled;
  auto start = std::chrono::steady_clock::now();
  // ---- tuning hook (runtime/tune/tuned_compile.hpp): the tuning cache's loop shape for this
  // kernel, or with TG_BEAM=n a program that searches at its first launch; else the backend's own.
  std::shared_ptr<program> p = tune::compile_tuned(backend_, source);
  if (!p) p = backend_->compile(source);
  // ---- end of tuning hook
  if (debug_level() >= 1) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    char line[64];
    std::snprintf(line, sizeof line, " in %.1f ms", ms);
    log(log_level::debug, "jit: compiled " + source.name + line);
    if (debug_level() >= 2) log(log_level::debug, ast::to_string(source.nodes));
  }
  cache_->programs.emplace(h, cache::entry{std::vector<ast::node>(source.nodes.begin(), source.nodes.end()),
                                           source.upcast, source.vector_lanes, source.panel, p});
  ++cache_->stats.compiled;
  return p;
}

device_stats device::stats() const {
  std::lock_guard<std::mutex> guard(cache_->lock);
  return cache_->stats;
}

// Step 1 of the run-time pipeline (runtime/device/pipeline.hpp): specialization.
std::shared_ptr<program> device::compile_for(const kernel_source& source, std::span<const std::int64_t> vars) {
  if (vars.empty() || !opt::has_variables(source.nodes)) return compile(source);
  int uses = 0;
  {
    std::lock_guard<std::mutex> guard(cache_->lock);
    auto key = std::make_pair(ast::hash(source.nodes, fnv_offset ^ std::uint64_t(source.global_ranges)),
                              std::vector<std::int64_t>(vars.begin(), vars.end()));
    uses = ++cache_->bindings[key];
  }
  if (uses < specialize_after) return compile(source);
  std::vector<ast::node> fixed = opt::specialize(source.nodes, vars);
  if (uses == specialize_after) {
    std::lock_guard<std::mutex> guard(cache_->lock);
    ++cache_->stats.specialized;
  }
  return compile({fixed, source.global_ranges, source.name + "_s", source.upcast, source.vector_lanes, source.panel});
}

void device::launch(const ast::kernel& kernel, std::span<const buffer> buffers, std::span<const std::int64_t> vars) {
  check_slot_count(kernel.slot_count, buffers.size());
  prepare(kernel).launch(buffers, vars);
}

prepared_kernel device::prepare(const ast::kernel& kernel) {
  return {compile({kernel.nodes, kernel.global_ranges, kernel_name(kernel.nodes, kernel.global_ranges), kernel.upcast,
                   kernel.vector_lanes, kernel.panel}),
          kernel.slot_count};
}

prepared_kernel device::prepare_fused(std::span<const ast::kernel* const> kernels, std::span<const std::int64_t> vars) {
  cache::fused_key key;
  int slots = 0;
  for (const ast::kernel* k : kernels) {
    // The variables it reads, then its AST with their values (its grid fixed).
    for (const ast::node& n : k->nodes)
      if (n.o == ast::op::variable) {
        const auto index = std::size_t(n.arg);
        if (index >= vars.size())
          throw usage_error(str("prepare_fused: a kernel reads variable ", index, "; ", vars.size(), " values given"));
        const std::pair<std::size_t, std::int64_t> b{index, vars[index]};
        if (std::find(key.bound.begin(), key.bound.end(), b) == key.bound.end()) key.bound.push_back(b);
      }
    key.parts.push_back(*k);
    if (opt::has_variables(k->nodes)) key.parts.back().nodes = opt::specialize(k->nodes, vars);
    slots += k->slot_count;
  }
  std::sort(key.bound.begin(), key.bound.end());
  std::lock_guard<std::mutex> guard(cache_->lock);
  for (const auto& [known, compiled] : cache_->fused)
    if (known == key) return compiled ? prepared_kernel(compiled, slots) : prepared_kernel();
  fused_source source{.bound = key.bound};
  for (const ast::kernel& k : key.parts) {
    const std::string name = kernel_name(k.nodes, k.global_ranges);
    source.name += (source.parts.empty() ? "fused__" : "__") + name;  // a symbol: letters, digits and _
    source.parts.push_back({k.nodes, k.global_ranges, name, k.upcast, k.vector_lanes, k.panel});
    source.slot_counts.push_back(k.slot_count);
  }
  std::shared_ptr<program> p = kernels.size() < 2 ? nullptr : backend_->compile_fused(source);
  // Where the backend fuses, its parts take their tuned schedules (the cache's, or BEAM's), and
  // the launch is compiled again with them.
  if (p && tune::tune_fused_parts(backend_, source)) p = backend_->compile_fused(source);
  if (p) ++cache_->stats.compiled;
  cache_->fused.emplace_back(std::move(key), p);
  return p ? prepared_kernel(p, slots) : prepared_kernel();
}

std::string prepared_kernel::describe() const { return program_ ? program_->describe() : std::string(); }

void prepared_kernel::launch(std::span<const buffer> buffers, std::span<const std::int64_t> vars) const {
  if (!program_) throw usage_error("prepared_kernel::launch: the kernel is empty; make it with device::prepare");
  check_slot_count(slot_count_, buffers.size());
  // On the stack for the usual few slots: a launch allocates nothing.
  constexpr std::size_t inline_slots = 16;
  std::array<void*, inline_slots> fixed;
  std::vector<void*> spilled(buffers.size() > inline_slots ? buffers.size() : 0);
  std::span<void*> slots = spilled.empty() ? std::span<void*>(fixed).first(buffers.size()) : std::span<void*>(spilled);
  for (std::size_t i = 0; i < buffers.size(); ++i) slots[i] = buffers[i].data();
  program_->launch(slots, vars);
}

host_tensor device::run(const plan_view& plan, std::initializer_list<named_input> inputs,
                        std::initializer_list<var_binding> vars) {
  return run(plan, std::span<const named_input>(inputs.begin(), inputs.size()),
             std::span<const var_binding>(vars.begin(), vars.size()));
}

host_tensor device::run(const plan_view& plan, std::span<const named_input> inputs, std::span<const var_binding> vars) {
  // 1. variables: every one bound, within its bounds, and no unknown names
  std::vector<std::int64_t> values(plan.vars.size());
  std::vector<bool> bound(plan.vars.size(), false);
  for (const var_binding& v : vars) {
    std::size_t i = 0;
    while (i < plan.vars.size() && plan.vars[i].name.view() != v.name) ++i;
    if (i == plan.vars.size()) throw usage_error(str("run: the plan has no variable named '", v.name, "'"));
    const symbol& s = plan.vars[i];
    if (v.value < s.lo || v.value > s.hi)
      throw usage_error(str("run: variable '", v.name, "' = ", v.value, " is outside its range [", s.lo, ", ", s.hi, "]"));
    values[i] = v.value;
    bound[i] = true;
  }
  for (std::size_t i = 0; i < plan.vars.size(); ++i)
    if (!bound[i]) throw usage_error(str("run: variable '", plan.vars[i].name.view(), "' is not bound; pass {\"",
                                         plan.vars[i].name.view(), "\", value}"));

  // 2. buffers: inputs checked against the plan, the rest allocated
  auto shape_of = [&](const buffer_info& b) {
    std::vector<std::int64_t> shape;
    for (int i = 0; i < b.shape.rank; ++i) shape.push_back(b.shape[i].value(plan.vars, values));
    return shape;
  };
  std::vector<buffer> buffers(plan.buffers.size());
  for (const named_input& in : inputs) {
    bool found = false;
    for (const buffer_info& b : plan.buffers) found = found || (b.role == buffer_role::input && in.name == b.name);
    if (!found) {
      std::string names;
      for (const buffer_info& b : plan.buffers)
        if (b.role == buffer_role::input) names += (names.empty() ? "" : ", ") + std::string(b.name);
      throw usage_error(str("run: the plan has no input named '", in.name, "' (inputs: ", names, ")"));
    }
  }
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    const buffer_info& b = plan.buffers[i];
    std::vector<std::int64_t> shape = shape_of(b);
    std::int64_t numel = 1;
    for (std::int64_t d : shape) numel *= d;
    buffers[i] = allocate(std::size_t(numel) * std::size_t(size_bytes(b.dt)));
    if (b.role != buffer_role::input) continue;
    const named_input* given = nullptr;
    for (const named_input& in : inputs)
      if (in.name == b.name) {
        if (given) throw usage_error(str("run: input '", b.name, "' is given twice"));
        given = &in;
      }
    if (!given) throw usage_error(str("run: input '", b.name, "' (", shape_text(shape, b.dt), ") is missing"));
    if (given->data.dt != b.dt)
      throw usage_error(str("run: input '", b.name, "' holds ", tg::name(given->data.dt), ", the plan expects ", tg::name(b.dt)));
    if (std::int64_t(given->data.count) != numel)
      throw usage_error(str("run: input '", b.name, "' has ", given->data.count, " elements, the plan expects ",
                            numel, " (", shape_text(shape, b.dt), ")"));
    buffers[i].copy_in(given->data.data, given->data.size_bytes());
  }

  // 3. kernels in order
  for (std::size_t k = 0; k < plan.kernels.size(); ++k) {
    const kernel_info& info = plan.kernels[k];
    std::span<const ast::node> nodes = plan.kernel_nodes(int(k));
    auto p = compile_for({nodes, info.global_ranges, kernel_name(nodes, info.global_ranges)}, values);
    std::vector<void*> slots;
    for (int s = 0; s < info.slot_count; ++s) slots.push_back(buffers[std::size_t(info.slot_buffer[s])].data());
    auto start = std::chrono::steady_clock::now();
    p->launch(slots, values);
    if (debug_level() >= 1) {
      backend_->synchronize();
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      char time[32];
      std::snprintf(time, sizeof time, " %.3f ms", ms);
      log(log_level::debug, str("run: kernel ", k, " ", kernel_name(nodes, info.global_ranges), time));
    }
  }
  backend_->synchronize();
  const buffer_info& out = plan.buffers[std::size_t(plan.output)];
  host_tensor result(out.dt, shape_of(out));
  buffers[std::size_t(plan.output)].copy_out(result.bytes().data(), result.bytes().size());
  return result;
}

}  // namespace tg
