// am_backend_compile.cpp: the AMD backend's slots of the run-time pipeline (runtime/device/pipeline.hpp
// lists its steps; the opts come from runtime/opt/gpu_heuristic.hpp through the GPU traits here):
//   render:  the kernel AST -> an amdgpu_kernel function (runtime/codegen/amdgpu_kernel.hpp)
//   compile: O3 + the AMDGPU backend -> an ELF object (runtime/codegen/amdgpu_compiler.hpp)
//   4. load:    code_object + am_program: the image in VRAM, kernarg slots (am_backend_program.cpp)
//   5. launch:  the grid from the variables, the kernargs written, one dispatch (compiled_program)
// and render_fused: several kernels as one dispatch (amdgpu_fused_kernel.hpp; fused_program)
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>
#include <tg/core/error.hpp>
#include <tg/device.hpp>
#include <tg/log.hpp>

#include "drivers/amd/am_backend.hpp"
#include "runtime/codegen/amdgpu_compiler.hpp"
#include "runtime/codegen/amdgpu_fused_kernel.hpp"
#include "runtime/codegen/amdgpu_kernel.hpp"
#include "runtime/codegen/amdgpu_metadata.hpp"
#include "runtime/codegen/gpu_frame.hpp"
#include "runtime/device/kernel_compiler.hpp"

namespace tg::amd {

namespace {

// Work-items per workgroup: 8 waves of 32.
constexpr int workgroup_size = 256;

// A tg kernel compiled for the device: the loaded program, and what launch needs to size its grid.
class compiled_program final : public am_dispatchable {
 public:
  compiled_program(std::shared_ptr<am_program> loaded, std::span<const ast::node> nodes, int global_ranges,
                   codegen::amdgpu_kernel_shape shape, std::string name, std::string resources)
      : loaded_(std::move(loaded)), nodes_(nodes.begin(), nodes.end()), global_ranges_(global_ranges), shape_(shape),
        name_(std::move(name)), resources_(std::move(resources)) {}

  // For -v listings: the schedule and what the kernel uses (resources_of).
  std::string describe() const override { return resources_; }

  // The plan passes every buffer slot of the kernel and every variable of the plan; the kernel
  // takes the slots it uses and the variables up to the highest it reads.
  void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) override {
    const am_dispatch_plan p = plan_launch(buffers.size(), vars);
    if (p.is_empty()) return;  // an empty output: nothing to dispatch
    loaded_->launch(buffers.first(p.buffers), vars.first(p.vars), p.shape);
  }

  // The launch geometry for `vars`, for launch and for graphs (am_graph.cpp, which writes it into
  // its indirect buffer at capture and again at each replay whose variables changed).
  am_dispatch_plan plan_launch(std::size_t buffer_count, std::span<const std::int64_t> vars) override {
    if (buffer_count < std::size_t(shape_.buffers) || vars.size() < std::size_t(shape_.vars))
      throw usage_error(str("AMD: kernel '", name_, "' uses ", shape_.buffers, " buffers and ", shape_.vars,
                            " variables; launch gave ", buffer_count, " and ", vars.size()));
    const std::uint64_t groups = codegen::amdgpu_workgroups(nodes_, global_ranges_, shape_, vars);
    return {loaded_.get(), std::size_t(shape_.buffers), std::size_t(shape_.vars),
            {.workgroups = {std::uint32_t(groups), 1, 1}, .workgroup_size = {std::uint32_t(shape_.workgroup_size), 1, 1}}};
  }

  bool reads_variable(std::size_t index) const override {
    return std::any_of(nodes_.begin(), nodes_.end(),
                       [&](const ast::node& n) { return n.o == ast::op::variable && std::size_t(n.arg) == index; });
  }

 private:
  std::shared_ptr<am_program> loaded_;
  std::vector<ast::node> nodes_;
  int global_ranges_;
  codegen::amdgpu_kernel_shape shape_;
  std::string name_;
  std::string resources_;
};

// Several tg kernels compiled as one (device::prepare_fused; runtime/codegen/amdgpu_fused_kernel.hpp):
// one dispatch whose grid is the parts' workgroups, fixed when they were specialised. A launch
// passes the parts' slots one after another and the variables the parts were specialised to.
class fused_program final : public am_dispatchable {
 public:
  fused_program(std::shared_ptr<am_program> loaded, const codegen::amdgpu_fused_shape& shape, int workgroup_size,
                std::vector<std::pair<std::size_t, std::int64_t>> bound, std::string name, std::string resources)
      : loaded_(std::move(loaded)), buffers_(std::size_t(shape.buffers)),
        launch_shape_{.workgroups = {shape.workgroups, 1, 1}, .workgroup_size = {std::uint32_t(workgroup_size), 1, 1}},
        bound_(std::move(bound)), name_(std::move(name)), resources_(std::move(resources)) {}

  std::string describe() const override { return resources_; }

  void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) override {
    const am_dispatch_plan p = plan_launch(buffers.size(), vars);
    if (p.is_empty()) return;
    loaded_->launch(buffers.first(p.buffers), {}, p.shape);
  }

  // The kernel reads no variables (each part has its values as constants); those values are
  // checked here, at every launch and every graph replay that changes them (reads_variable).
  am_dispatch_plan plan_launch(std::size_t buffer_count, std::span<const std::int64_t> vars) override {
    if (buffer_count != buffers_)
      throw usage_error(str("AMD: fused kernel '", name_, "' takes ", buffers_, " buffers (its parts' slots); launch gave ",
                            buffer_count));
    for (const auto& [index, value] : bound_)
      if (index >= vars.size() || vars[index] != value)
        throw usage_error(str("AMD: fused kernel '", name_, "' was prepared for variable ", index, " = ", value,
                              "; launch gave ", index < vars.size() ? std::to_string(vars[index]) : std::string("none")));
    return {loaded_.get(), buffers_, 0, launch_shape_};
  }

  bool reads_variable(std::size_t index) const override {
    return std::any_of(bound_.begin(), bound_.end(), [&](const auto& b) { return b.first == index; });
  }

 private:
  std::shared_ptr<am_program> loaded_;
  std::size_t buffers_;
  am_launch_shape launch_shape_;
  std::vector<std::pair<std::size_t, std::int64_t>> bound_;
  std::string name_;
  std::string resources_;
};

}  // namespace

namespace {

// What a compiled kernel uses, from the code object's metadata note
// (runtime/codegen/amdgpu_metadata.hpp: SGPRs, VGPRs, scratch bytes per work-item, LDS bytes; the
// descriptor cannot give SGPRs on GFX10+), the waves per SIMD those VGPRs allow, and its
// schedule; for TG_DEBUG=1 (one line per compile) and -v (program::describe).
std::string resources_of(const std::string& processor, std::span<const std::byte> elf, const std::string& kernel,
                         std::span<const codegen::amdgpu_kernel_shape> shapes) {
  const auto r = codegen::read_kernel_resources(elf, kernel);
  if (!r) return processor + ", no resource metadata";
  // The schedule: work-items sharing an element, or the register tile each work-item computes
  // (of each part, for a fused kernel).
  std::string schedule = shapes.size() > 1 ? "fused: " : "";
  for (std::size_t i = 0; i < shapes.size(); ++i)
    schedule += (i ? " | " : "") + codegen::gpu_schedule_text(shapes[i].group_lanes, shapes[i].upcast, "work-item");
  char line[400];
  std::snprintf(line, sizeof line, "%s, %s, %u SGPRs, %u VGPRs (%u waves per SIMD), %llu scratch bytes per work-item, "
                "%llu LDS bytes", processor.c_str(), schedule.c_str(), r->sgprs, r->vgprs, codegen::waves_per_simd(r->vgprs),
                static_cast<unsigned long long>(r->scratch_bytes), static_cast<unsigned long long>(r->lds_bytes));
  return line;
}

}  // namespace

namespace {

// What the compile step needs besides the module: the launch geometry the renderer chose.
struct amd_rendered final : rendered_kernel {
  codegen::amdgpu_kernel_shape shape;
  std::optional<codegen::amdgpu_fused_shape> fused;  // render_fused's (shape is then unused)
  std::vector<std::pair<std::size_t, std::int64_t>> bound;
  std::chrono::steady_clock::time_point start;  // for the compile report
};

class am_kernel_compiler final : public kernel_compiler {
 public:
  am_kernel_compiler(am_backend& owner, const std::string& processor) : owner_(owner), amdgpu_(processor) {
    traits_.of = opt::target_traits::kind::gpu;
    traits_.gpu.max_reduce_unroll = codegen::max_gpu_reduce_unroll;  // what codegen::emit_amdgpu_kernel takes
    // NV's rule for kernels that leave the GPU idle (opt::gpu_traits::sparse_block_bytes), from
    // the model, not a card: tests/bench/gpu_step_roofline charged the 8B decode's RMS norm scale
    // (one output, 4096 values over 32 work-items in 32 trips) 18 us a launch, 10% of the token.
    traits_.gpu.sparse_block_bytes = 16;
    // These three from BEAM on AMD:EMU (opt::gpu_traits says where): with them the defaults
    // model the 1B decode tokens within 0.5% of what BEAM finds (tests/bench/gpu_step_roofline).
    traits_.gpu.sparse_max_unroll = 32;
    traits_.gpu.max_split_trips = 1;
    traits_.gpu.max_split_unroll = 8;
  }
  const opt::target_traits& traits() const override { return traits_; }

  std::unique_ptr<rendered_kernel> render(const kernel_source& source, const codegen::kernel_opts& opts) override {
    auto r = std::make_unique<amd_rendered>();
    r->start = std::chrono::steady_clock::now();
    begin_render(*r, source, opts);
    amdgpu_.prepare(*r->module);
    r->symbol = source.name;
    r->shape = codegen::emit_amdgpu_kernel(*r->module, source.name, source.nodes, source.global_ranges, workgroup_size,
                                           opts);
    return r;
  }

  std::unique_ptr<rendered_kernel> render_fused(const fused_source& source,
                                                std::span<const codegen::kernel_opts> opts) override {
    auto r = std::make_unique<amd_rendered>();
    r->start = std::chrono::steady_clock::now();
    begin_render(*r, {{}, 0, source.name}, {});
    amdgpu_.prepare(*r->module);
    r->symbol = source.name;
    std::vector<codegen::amdgpu_fused_part> parts;
    for (std::size_t i = 0; i < source.parts.size(); ++i)
      parts.push_back({source.parts[i].nodes, source.parts[i].global_ranges, opts[i], source.slot_counts[i]});
    r->fused = codegen::emit_amdgpu_fused_kernel(*r->module, source.name, parts, workgroup_size);
    r->bound = source.bound;
    return r;
  }

  std::shared_ptr<program> compile(std::unique_ptr<rendered_kernel> kernel) override {
    auto& r = static_cast<amd_rendered&>(*kernel);
    const std::vector<std::byte> elf = amdgpu_.compile(*r.module, r.symbol);
    const code_object co(elf);
    std::vector<kernarg> args(std::size_t(r.fused ? r.fused->buffers : r.shape.buffers), kernarg_pointer);
    if (!r.fused) args.insert(args.end(), std::size_t(r.shape.vars), kernarg_u64);
    std::shared_ptr<am_program> loaded = owner_.load_program(co, r.symbol, args, {});
    std::string resources = resources_of(amdgpu_.processor(), elf, r.symbol,
                                         r.fused ? std::span<const codegen::amdgpu_kernel_shape>(r.fused->parts)
                                                 : std::span<const codegen::amdgpu_kernel_shape>(&r.shape, 1));
    if (debug_level() >= 1) {
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - r.start).count();
      log(log_level::debug, str(owner_.name(), ": compiled kernel ", r.name, " in ", int(ms * 10) / 10.0, " ms: ", resources));
    }
    if (r.fused)
      return std::make_shared<fused_program>(std::move(loaded), *r.fused, workgroup_size, std::move(r.bound), r.name,
                                             std::move(resources));
    return std::make_shared<compiled_program>(std::move(loaded), r.nodes, r.global_ranges, r.shape, r.name,
                                              std::move(resources));
  }

 private:
  am_backend& owner_;
  codegen::amdgpu_compiler amdgpu_;
  opt::target_traits traits_;
};

}  // namespace

kernel_compiler* am_backend::compiler() {
  if (!compiler_) compiler_ = std::make_unique<am_kernel_compiler>(*this, device_->info().gfx_target);
  return compiler_.get();
}

const opt::target_traits& am_backend::kernel_traits() { return compiler()->traits(); }

}  // namespace tg::amd
