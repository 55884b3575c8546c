// pipeline_test.cpp: the run-time pipeline's shared steps (runtime/device/pipeline.hpp): opts chosen
// from a target's traits (the author's loop shape on a CPU, the GPU heuristic on a GPU), and a
// backend that fills the kernel_compiler slots getting render then compile with those opts, through
// backend::compile and through tg::device. A backend without the slots compiles nothing, with a
// message saying so.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <tg/device.hpp>
#include <tg/tg.hpp>

#include "runtime/device/pipeline.hpp"
#include "runtime/opt/gpu_heuristic.hpp"

namespace {

// A row sum over 64 rows of 4096: a matvec's shape, which a GPU splits across a thread group.
constexpr auto x = tg::input<float>("x", tg::dims<64, 4096>);
constexpr auto row_sums = tg::lower(x.sum(tg::axis<1>));

tg::kernel_source source_of(std::vector<int> upcast = {}, bool vector_lanes = true) {
  const tg::plan_view view = row_sums.view();
  return {view.kernel_nodes(0), view.kernels[0].global_ranges, "row_sums", std::move(upcast), vector_lanes};
}

// A program that counts its launches.
struct counting_program final : tg::program {
  int launches = 0;
  void launch(std::span<void* const>, std::span<const std::int64_t>) override { ++launches; }
};

// Slots that record what the pipeline handed them.
class recording_compiler final : public tg::kernel_compiler {
 public:
  explicit recording_compiler(tg::opt::target_traits t) : traits_(t) {}
  const tg::opt::target_traits& traits() const override { return traits_; }
  std::unique_ptr<tg::rendered_kernel> render(const tg::kernel_source& source, const tg::codegen::kernel_opts& opts) override {
    steps.push_back("render " + source.name);
    rendered_opts = opts;
    auto r = std::make_unique<tg::rendered_kernel>();
    tg::begin_render(*r, source, opts);
    r->symbol = source.name;
    rendered_module = r->module.get();
    return r;
  }
  std::shared_ptr<tg::program> compile(std::unique_ptr<tg::rendered_kernel> r) override {
    steps.push_back("compile " + r->name);
    compiled_module = r->module.get();
    CHECK(r->opts == rendered_opts);
    return std::make_shared<counting_program>();
  }
  std::vector<std::string> steps;
  tg::codegen::kernel_opts rendered_opts;
  const llvm::Module* rendered_module = nullptr;
  const llvm::Module* compiled_module = nullptr;

 private:
  tg::opt::target_traits traits_;
};

// A host-memory backend that only fills the slots: allocation, copies and the compiler.
class slots_backend final : public tg::backend {
 public:
  explicit slots_backend(tg::opt::target_traits t) : compiler_(t) {}
  std::string name() const override { return "SLOTS"; }
  void* allocate(std::size_t n) override { return ::operator new(n); }
  void release(void* p) override { ::operator delete(p); }
  void copy_in(void* d, const void* s, std::size_t n) override { std::memcpy(d, s, n); }
  void copy_out(void* d, const void* s, std::size_t n) override { std::memcpy(d, s, n); }
  void synchronize() override {}
  tg::kernel_compiler* compiler() override { return &compiler_; }
  recording_compiler compiler_;
};

class no_compiler_backend final : public tg::backend {
 public:
  std::string name() const override { return "NOCOMPILE"; }
  void* allocate(std::size_t) override { return nullptr; }
  void release(void*) override {}
  void copy_in(void*, const void*, std::size_t) override {}
  void copy_out(void*, const void*, std::size_t) override {}
  void synchronize() override {}
};

tg::opt::target_traits gpu_traits() {
  tg::opt::target_traits t;
  t.of = tg::opt::target_traits::kind::gpu;
  return t;
}

}  // namespace

TEST_CASE("opts for a CPU: the author's loop shape with the target's ISA, else the heuristic; a wrong count is refused") {
  tg::opt::target_traits cpu;
  cpu.isa = {512, true};
  const tg::codegen::kernel_opts authored = tg::opt::choose_opts_for(cpu, source_of({8}, false));
  CHECK(authored.upcast == std::vector<int>{8});
  CHECK_FALSE(authored.vector_lanes);
  CHECK(authored.isa == tg::codegen::x86_isa{512, true});
  const tg::codegen::kernel_opts chosen = tg::opt::choose_opts_for(cpu, source_of());
  CHECK(chosen.isa == tg::codegen::x86_isa{512, true});
  CHECK(chosen.group_lanes == 1);  // a CPU has no thread groups
  tg::kernel_source panelled = source_of({8}, false);
  panelled.panel = 64;
  CHECK(tg::opt::choose_opts_for(cpu, panelled).panel == 64);
  CHECK_THROWS_WITH_AS(tg::opt::choose_opts_for(cpu, source_of({4, 4})),
                       doctest::Contains("kernel row_sums gives 2 upcasts for 1 output ranges"), tg::usage_error);
}

TEST_CASE("opts for a GPU: the GPU heuristic for its traits; a CPU register tile from the author is not a GPU schedule") {
  const tg::kernel_source s = source_of({8}, false);
  const tg::codegen::kernel_opts gpu = tg::opt::choose_opts_for(gpu_traits(), s);
  CHECK(gpu == tg::opt::choose_gpu_opts(s.nodes, s.global_ranges, tg::opt::gpu_traits{}));
  CHECK(gpu.group_lanes > 1);  // 64 rows of 4096: a group of threads shares each row
  CHECK(gpu.upcast.empty());
}

TEST_CASE("a backend that fills the slots gets render, then compile of the same module, with the traits' opts") {
  slots_backend b(gpu_traits());
  std::shared_ptr<tg::program> p = b.compile(source_of());
  REQUIRE(p != nullptr);
  CHECK(b.compiler_.steps == std::vector<std::string>{"render row_sums", "compile row_sums"});
  CHECK(b.compiler_.rendered_module != nullptr);
  CHECK(b.compiler_.compiled_module == b.compiler_.rendered_module);
  CHECK(b.compiler_.rendered_opts.group_lanes > 1);

  // Through tg::device: the device's steps (cache) come first; a second compile is a cache hit.
  static const tg::backend_registration slots("TEST:SLOTS", [](const std::string&, const tg::device_options&) {
    return std::make_shared<slots_backend>(gpu_traits());
  });
  tg::device dev("TEST:SLOTS");
  auto& backend = dynamic_cast<slots_backend&>(dev.impl());
  const tg::plan_view view = row_sums.view();
  tg::ast::kernel k{std::vector<tg::ast::node>(view.kernel_nodes(0).begin(), view.kernel_nodes(0).end()),
                    view.kernels[0].global_ranges, 2};
  (void)dev.prepare(k);
  (void)dev.prepare(k);
  CHECK(backend.compiler_.steps.size() == 2);
  CHECK(dev.stats().compiled == 1);
}

TEST_CASE("a backend without the slots compiles nothing, and says so") {
  no_compiler_backend b;
  CHECK_THROWS_WITH_AS(b.compile(source_of()), "device 'NOCOMPILE' compiles no kernels", tg::usage_error);
}

TEST_CASE("kernel names give each range's bound, a run of four or more equal ones as one") {
  tg::kernel_builder kb;
  auto i = kb.output_range(8);
  auto t = kb.output_range(kb.variable(0));
  auto a = kb.reduce_range(4), b = kb.reduce_range(4), c = kb.reduce_range(4), d = kb.reduce_range(4);
  auto e = kb.reduce_range(2), f = kb.reduce_range(2);
  auto x = kb.load<float>(1, t * 2048 + i * 256 + a * 64 + b * 16 + c * 4 + d + e * 0 + f * 0);
  kb.store(0, t * 8 + i, kb.sum(kb.sum(kb.sum(kb.sum(kb.sum(kb.sum(x, f), e), d), c), b), a));
  const tg::ast::kernel k = kb.finish();
  CHECK(tg::kernel_name(k.nodes, k.global_ranges) == "r_8_n_4x4_2_2");
}
