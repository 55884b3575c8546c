// amd_matmul_tiles_test.cpp: matrix-matrix kernels on the emulated GPU (gfx1100 and gfx1200) with
// register tiles (kernel_opts::upcast: a work-item per tile of outputs) and the reduce unrolled
// (kernel_opts::reduce_unroll), against plain C++: tiles that divide the output and tiles that
// do not (the last tile pulled back to overlap the one before), bounds smaller than the tile, a
// symbolic row count down to 0, a batched matmul and f16 inputs; then DSL matmuls through the
// default GPU heuristic against the CPU device; and what the heuristic picks for a matmul, a
// matvec and an elementwise kernel.
#include <tg/tg.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "drivers/amd/code_object.hpp"
#include "drivers/emu/emu_device.hpp"
#include "runtime/codegen/amdgpu_compiler.hpp"
#include "runtime/codegen/amdgpu_kernel.hpp"
#include "runtime/opt/gpu_heuristic.hpp"
#include "tests/dsl/reference.hpp"

namespace {

struct gpu {
  const char* device;
  const char* target;
};
constexpr gpu gpus[] = {{"AMD:EMU:gfx11", "gfx1100"}, {"AMD:EMU:gfx12", "gfx1200"}};
constexpr int workgroup = 64;

tg::device& emulated(const char* name) {
  static std::vector<std::pair<std::string, tg::device>> opened;
  for (auto& [n, d] : opened)
    if (n == name) return d;
  return opened.emplace_back(name, tg::device(name)).second;
}

struct host_buffer {
  const void* data;
  std::size_t bytes;
};
template <class T>
host_buffer bytes_of(const std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}

// Runs `k` on the emulated GPU with `opts`; slot 0 is the float output (`outputs` elements,
// pre-filled with a marker so an element no work-item wrote shows).
std::vector<float> run_tiled(const gpu& g, const tg::ast::kernel& k, const tg::codegen::kernel_opts& opts,
                             std::size_t outputs, std::vector<host_buffer> inputs, std::vector<std::int64_t> vars = {}) {
  tg::device& dev = emulated(g.device);
  auto& emu = dynamic_cast<tg::emu::emu_device&>(dev.impl());
  tg::codegen::amdgpu_compiler compiler(g.target);
  llvm::LLVMContext context;
  llvm::Module module("k", context);
  compiler.prepare(module);
  const auto shape = tg::codegen::emit_amdgpu_kernel(module, "k", k.nodes, k.global_ranges, workgroup, opts);
  const tg::amd::code_object co(compiler.compile(module, "k"));
  std::vector<tg::amd::kernarg> args(std::size_t(shape.buffers), tg::amd::kernarg_pointer);
  args.insert(args.end(), std::size_t(shape.vars), tg::amd::kernarg_u64);
  auto program = emu.am_backend::load_program(co, "k", args, {});
  std::vector<float> marker(outputs, 77.0f);
  std::vector<tg::buffer> buffers{dev.allocate(std::max<std::size_t>(1, outputs) * sizeof(float))};
  buffers[0].copy_in(marker.data(), outputs * sizeof(float));
  for (const host_buffer& in : inputs) {
    buffers.push_back(dev.allocate(in.bytes));
    buffers.back().copy_in(in.data, in.bytes);
  }
  std::vector<void*> pointers;
  for (const tg::buffer& b : buffers) pointers.push_back(b.data());
  const std::uint64_t groups = tg::codegen::amdgpu_workgroups(k.nodes, k.global_ranges, shape, vars);
  if (groups > 0)
    program->launch(pointers, vars, {.workgroups = {std::uint32_t(groups), 1, 1}, .workgroup_size = {workgroup, 1, 1}});
  dev.synchronize();
  std::string faults;
  for (const auto& f : emu.emulated_gpu().faults()) faults += f.message + "; ";
  REQUIRE_MESSAGE(faults.empty(), faults);
  std::vector<float> got(outputs);
  buffers[0].copy_out(got.data(), outputs * sizeof(float));
  return got;
}

tg::codegen::kernel_opts tiled(std::vector<int> upcast, int unroll) {
  tg::codegen::kernel_opts opts;
  opts.upcast = std::move(upcast);
  opts.reduce_unroll = unroll;
  return opts;
}

// c[b, i, j] = sum_k a[b, i, k] * w[b, k, j], with `batch` batches (0: no batch range) and the
// row count `rows` a constant, or variable 0 when negative; inputs of type `in`.
tg::ast::kernel matmul_kernel(int batch, std::int64_t rows, std::int64_t k_len, std::int64_t cols, tg::dtype in,
                              std::int64_t row_stride) {
  tg::kernel_builder kb;
  tg::kvalue b = kb.index(0);
  if (batch > 0) b = kb.output_range(batch);
  auto i = rows < 0 ? kb.output_range(kb.variable(0)) : kb.output_range(rows);
  auto j = kb.output_range(cols);
  auto k = kb.reduce_range(k_len);
  auto as_float = [&](tg::kvalue v) { return in == tg::dtype::float32 ? v : kb.cast(tg::dtype::float32, v); };
  auto a = as_float(kb.load(1, in, b * (row_stride * k_len) + i * k_len + k));
  auto w = as_float(kb.load(2, in, b * (k_len * cols) + k * cols + j));
  kb.store(0, b * (row_stride * cols) + i * cols + j, kb.sum(a * w, k));
  return kb.finish();
}

std::vector<double> matmul_ref(const std::vector<float>& a, const std::vector<float>& w, int batches, std::int64_t rows,
                               std::int64_t k_len, std::int64_t cols, std::int64_t row_stride) {
  std::vector<double> c(std::size_t(std::max(batches, 1) * row_stride * cols), 77.0);
  for (int b = 0; b < std::max(batches, 1); ++b)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        double s = 0;
        for (std::int64_t k = 0; k < k_len; ++k)
          s += double(a[std::size_t((b * row_stride + i) * k_len + k)]) * w[std::size_t((b * k_len + k) * cols + j)];
        c[std::size_t((b * row_stride + i) * cols + j)] = s;
      }
  return c;
}

struct tile_schedule {
  int tm, tn, unroll;
};
// 1 x 1 (the reduce unrolled alone), square and oblong tiles, a tile of 3 (no power of two), an
// unroll the reduce does not divide.
constexpr tile_schedule tile_schedules[] = {{1, 1, 32}, {2, 2, 16}, {4, 4, 8}, {4, 2, 3}, {3, 4, 4}};

namespace {

// out[t][d] = sum over c < n (variable 0) of p[t][c] * v[c][d], rows x 256 outputs: attention's
// weighted sum of V over a context of run-time length.
tg::ast::kernel weighted_sum_kernel(std::int64_t rows = 256, bool long_walk = false) {
  tg::kernel_builder kb;
  auto t = kb.output_range(rows);
  auto d = kb.output_range(256);
  auto n = kb.variable(0);
  auto c = kb.reduce_range(n);
  auto product = kb.load<float>(1, t * n + c) * kb.load<float>(2, c * 256 + d);
  kb.store(0, t * 256 + d, long_walk ? kb.sum_long_walk(product, c) : kb.sum(product, c));
  return kb.finish();
}
std::vector<float> weighted_sum_ref(const std::vector<float>& p, const std::vector<float>& v, std::int64_t length,
                                    std::int64_t rows = 256) {
  std::vector<float> out(std::size_t(rows * 256), 0.0f);
  for (int t = 0; t < rows; ++t)
    for (int d = 0; d < 256; ++d)
      for (std::int64_t c = 0; c < length; ++c)
        out[std::size_t(t * 256 + d)] += p[std::size_t(t * length + c)] * v[std::size_t(c * 256 + d)];
  return out;
}

}  // namespace

TEST_CASE("matmuls in register tiles, dividing the output or not, match plain C++") {
  struct shape {
    std::int64_t m, k, n;
  };
  for (const shape s : {shape{64, 64, 64}, shape{33, 17, 45}, shape{100, 129, 70}, shape{3, 5, 2}}) {
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    const tg::ast::kernel k = matmul_kernel(0, s.m, s.k, s.n, tg::dtype::float32, s.m);
    const auto a = tg::test::random_floats(std::size_t(s.m * s.k), 1), w = tg::test::random_floats(std::size_t(s.k * s.n), 2);
    const auto want = matmul_ref(a, w, 0, s.m, s.k, s.n, s.m);
    for (const gpu& g : gpus)
      for (auto [tm, tn, unroll] : tile_schedules) {
        CAPTURE(std::string(g.device));
        CAPTURE(tm);
        CAPTURE(tn);
        CAPTURE(unroll);
        tg::test::check_close(run_tiled(g, k, tiled({tm, tn}, unroll), want.size(), {bytes_of(a), bytes_of(w)}), want, 1e-4);
      }
  }
}

TEST_CASE("a batched matmul, a symbolic row count and f16 inputs in register tiles match plain C++") {
  const std::int64_t rows = 37, k_len = 23, cols = 30, max_rows = 40;
  const int batches = 3;
  const tg::ast::kernel batched = matmul_kernel(batches, rows, k_len, cols, tg::dtype::float32, rows);
  const auto a = tg::test::random_floats(std::size_t(batches * max_rows * k_len), 3);
  const auto w = tg::test::random_floats(std::size_t(batches * k_len * cols), 4);
  const auto want_batched = matmul_ref(a, w, batches, rows, k_len, cols, rows);
  // Rows a variable (bounded by max_rows, the stride between rows of c): 0, fewer than the tile, ragged, whole.
  const tg::ast::kernel symbolic = matmul_kernel(0, -1, k_len, cols, tg::dtype::float32, max_rows);
  // f16 inputs, converted to f32 before the multiply.
  const tg::ast::kernel halves = matmul_kernel(0, rows, k_len, cols, tg::dtype::float16, rows);
  std::vector<tg::half> ah, wh;
  std::vector<float> af, wf;  // the halves' values as floats, for the reference
  for (std::size_t i = 0; i < std::size_t(rows * k_len); ++i) af.push_back(float(ah.emplace_back(a[i])));
  for (std::size_t i = 0; i < std::size_t(k_len * cols); ++i) wf.push_back(float(wh.emplace_back(w[i])));
  const auto want_halves = matmul_ref(af, wf, 0, rows, k_len, cols, rows);
  for (const gpu& g : gpus)
    for (auto [tm, tn, unroll] : tile_schedules) {
      CAPTURE(std::string(g.device));
      CAPTURE(tm);
      CAPTURE(tn);
      CAPTURE(unroll);
      tg::test::check_close(run_tiled(g, batched, tiled({1, tm, tn}, unroll), want_batched.size(), {bytes_of(a), bytes_of(w)}),
                            want_batched, 1e-4);
      for (std::int64_t n : {0, 1, 3, 37, 40}) {
        CAPTURE(n);
        const auto want = matmul_ref(a, w, 0, n, k_len, cols, max_rows);
        tg::test::check_close(run_tiled(g, symbolic, tiled({tm, tn}, unroll), want.size(), {bytes_of(a), bytes_of(w)}, {n}),
                              want, 1e-4);
      }
      tg::test::check_close(run_tiled(g, halves, tiled({tm, tn}, unroll), want_halves.size(), {bytes_of(ah), bytes_of(wh)}),
                            want_halves, 1e-4);
    }
}

TEST_CASE("the codegen refuses upcasts it cannot lay out on a GPU") {
  const tg::ast::kernel k = matmul_kernel(0, 8, 8, 8, tg::dtype::float32, 8);
  for (const auto& opts : {tiled({2}, 1), tiled({1, 17}, 1), tiled({0, 1}, 1), tiled({1, 1}, 33)}) {
    llvm::LLVMContext context;
    llvm::Module module("k", context);
    CHECK_THROWS_AS(tg::codegen::emit_amdgpu_kernel(module, "k", k.nodes, k.global_ranges, 64, opts), tg::usage_error);
  }
}

// DSL matmuls with the default opts (runtime/opt/gpu_heuristic.hpp) on the emulated GPUs against
// the CPU device: ragged shapes, one big enough for a 2 x 2 tile (ragged too), a batched one with a 2 x 2 tile,
// f16 inputs, and a symbolic row count at several bindings, each run four times (from the third
// use a binding gets a kernel specialized to it, runtime/device/device.cpp: specialize_after,
// whose rows are a constant the heuristic can tile: 600 rows get a 2 x 2 tile).
TEST_CASE("DSL matmuls with the default GPU opts agree with the CPU") {
  constexpr auto a1 = tg::input<float>("a", tg::dims<33, 17>);
  constexpr auto b1 = tg::input<float>("b", tg::dims<17, 45>);
  constexpr auto a2 = tg::input<float>("a", tg::dims<100, 129>);
  constexpr auto b2 = tg::input<float>("b", tg::dims<129, 70>);
  constexpr auto a3 = tg::input<float>("a", tg::dims<513, 12>);
  constexpr auto b3 = tg::input<float>("b", tg::dims<12, 523>);
  constexpr auto a4 = tg::input<float>("a", tg::dims<4, 256, 6>);
  constexpr auto b4 = tg::input<float>("b", tg::dims<4, 6, 256>);
  constexpr auto ah = tg::input<tg::half>("a", tg::dims<40, 24>);
  constexpr auto bh = tg::input<tg::half>("b", tg::dims<24, 36>);
  constexpr auto n = tg::sym<"n", 1, 600>;
  constexpr auto as = tg::input<float>("a", tg::dims<n, 20>);
  constexpr auto bs = tg::input<float>("b", tg::dims<20, 600>);
  constexpr auto p1 = tg::lower(tg::matmul(a1, b1));
  constexpr auto p2 = tg::lower(tg::matmul(a2, b2));
  constexpr auto p3 = tg::lower(tg::matmul(a3, b3));
  constexpr auto p4 = tg::lower(tg::matmul(a4, b4));
  constexpr auto ph = tg::lower(tg::matmul(tg::cast<float>(ah), tg::cast<float>(bh)));
  constexpr auto ps = tg::lower(tg::matmul(as, bs));
  auto floats = [](std::size_t count, std::uint32_t seed) { return tg::test::random_floats(count, seed); };
  const auto x1 = floats(33 * 17, 10), y1 = floats(17 * 45, 11), x2 = floats(100 * 129, 12), y2 = floats(129 * 70, 13);
  const auto x3 = floats(513 * 12, 14), y3 = floats(12 * 523, 15), x4 = floats(4 * 256 * 6, 16), y4 = floats(4 * 6 * 256, 17);
  std::vector<tg::half> xh, yh;
  for (float v : floats(40 * 24, 18)) xh.emplace_back(v);
  for (float v : floats(24 * 36, 19)) yh.emplace_back(v);
  const auto ys = floats(20 * 600, 20);
  for (const gpu& g : gpus) {
    CAPTURE(std::string(g.device));
    tg::device& dev = emulated(g.device);
    auto same = [&](const auto& plan, std::initializer_list<tg::named_input> in, std::initializer_list<tg::var_binding> vars = {}) {
      tg::test::check_close(dev.run(plan, in, vars).template to_vector<float>(),
                            tg::test::cpu().run(plan, in, vars).template to_vector<float>(), 1e-4);
    };
    same(p1, {{"a", x1}, {"b", y1}});
    same(p2, {{"a", x2}, {"b", y2}});
    same(p3, {{"a", x3}, {"b", y3}});
    same(p4, {{"a", x4}, {"b", y4}});
    same(ph, {{"a", xh}, {"b", yh}});
    for (std::int64_t rows : {1, 7, 130, 600}) {
      CAPTURE(rows);
      const auto xs = floats(std::size_t(rows * 20), std::uint32_t(21 + rows));
      for (int time = 0; time < 4; ++time) same(ps, {{"a", xs}, {"b", ys}}, {{"n", rows}});
    }
    std::string faults;
    for (const auto& f : dynamic_cast<tg::emu::emu_device&>(dev.impl()).emulated_gpu().faults()) faults += f.message + "; ";
    CHECK_MESSAGE(faults.empty(), faults);
  }
}

// The heuristic tiles a matmul (grown while enough work-items remain to fill the GPU, with the
// reduce unrolled to about 64 loaded elements per trip), and leaves a matvec's group of lanes, an
// int8 matmul's nested lanes and an elementwise kernel's one thread per element as they were.
TEST_CASE("a weighted sum over a symbolic length, in 4 x 4 tiles with half a wave sharing each walk, matches plain C++") {
  // 256 rows: 4096 tiles, 2 iterations a trip; 512: 8192 tiles, twice busy_threads at half a
  // wave, 4 a trip.
  for (const std::int64_t rows : {256, 512}) {
    CAPTURE(rows);
    const tg::ast::kernel k = weighted_sum_kernel(rows);
    tg::opt::gpu_traits amd;
    amd.max_reduce_unroll = 32;
    const tg::codegen::kernel_opts opts = tg::opt::choose_gpu_opts(k.nodes, k.global_ranges, amd);
    REQUIRE(opts.group_lanes == 16);
    REQUIRE(opts.upcast == std::vector<int>{4, 4});
    REQUIRE(opts.reduce_unroll == (rows == 512 ? 4 : 2));
    for (const std::int64_t length : {1, 37, 64, 130}) {  // shorter than a trip, ragged, whole trips, several
      CAPTURE(length);
      const std::vector<float> p = tg::test::random_floats(std::size_t(rows * length), 3),
                               v = tg::test::random_floats(std::size_t(length * 256), 4);
      const std::vector<float> want = weighted_sum_ref(p, v, length, rows);
      for (const gpu& g : gpus) {
        CAPTURE(g.device);
        const std::vector<float> got = run_tiled(g, k, opts, want.size(), {bytes_of(p), bytes_of(v)}, {length});
        for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == doctest::Approx(want[i]).epsilon(1e-4));
      }
    }
  }
}

TEST_CASE("a weighted sum hinted long takes a whole wave for each walk and matches plain C++") {
  // At a wave, 256 rows come to 4096 tiles x 32 = 2 x busy_threads: 4 iterations a trip; 512 rows
  // to twice that, where waves queue: 2.
  for (const std::int64_t rows : {256, 512}) {
    CAPTURE(rows);
    const tg::ast::kernel k = weighted_sum_kernel(rows, true);
    tg::opt::gpu_traits amd;
    amd.max_reduce_unroll = 32;
    const tg::codegen::kernel_opts opts = tg::opt::choose_gpu_opts(k.nodes, k.global_ranges, amd);
    REQUIRE(opts.group_lanes == 32);
    REQUIRE(opts.upcast == std::vector<int>{4, 4});
    REQUIRE(opts.reduce_unroll == (rows == 512 ? 2 : 4));
    // The hint is a schedule's, not a meaning's: the kernel is another one to the caches.
    CHECK(k.nodes != weighted_sum_kernel(rows).nodes);
    for (const std::int64_t length : {1, 37, 64, 130}) {
      CAPTURE(length);
      const std::vector<float> p = tg::test::random_floats(std::size_t(rows * length), 7),
                               v = tg::test::random_floats(std::size_t(length * 256), 8);
      const std::vector<float> want = weighted_sum_ref(p, v, length, rows);
      for (const gpu& g : gpus) {
        CAPTURE(g.device);
        const std::vector<float> got = run_tiled(g, k, opts, want.size(), {bytes_of(p), bytes_of(v)}, {length});
        for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == doctest::Approx(want[i]).epsilon(1e-4));
      }
    }
  }
}

TEST_CASE("a one-thread walk unrolled over a symbolic length keeps each trip's loads in flight together") {
  // One work-item per output, 4 copies a trip, no group: the copies add into one accumulator.
  // When a copy past the bound was dropped by a select on that accumulator, each copy's add, and
  // with it its loads, waited for the copy before, and the AMDGPU backend waited for every load
  // apart: 64 waits a wave for a walk of 64; its 16 trips now take 32 (p's and V's loads).
  const tg::ast::kernel k = weighted_sum_kernel();
  tg::codegen::kernel_opts opts = tiled({1, 1}, 4);
  const std::int64_t length = 64;
  const std::vector<float> p = tg::test::random_floats(std::size_t(256 * length), 5),
                           v = tg::test::random_floats(std::size_t(length * 256), 6);
  const std::vector<float> want = weighted_sum_ref(p, v, length);
  for (const gpu& g : gpus) {
    CAPTURE(g.device);
    auto& gpu_model = dynamic_cast<tg::emu::emu_device&>(emulated(g.device).impl()).emulated_gpu();
    std::uint64_t waits = 0;
    gpu_model.observe_dispatches([&](const tg::emu::shader::launch&, const tg::emu::shader::dispatch_counters& c) {
      waits = std::max(waits, c.max_wave_memory_waits);
    });
    const std::vector<float> got = run_tiled(g, k, opts, want.size(), {bytes_of(p), bytes_of(v)}, {length});
    gpu_model.observe_dispatches({});
    for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == doctest::Approx(want[i]).epsilon(1e-4));
    CHECK(waits <= 40);
    MESSAGE(std::string(g.device) << ": " << waits << " memory waits a wave for a walk of 64 in trips of 4");
  }
}

TEST_CASE("the GPU heuristic gives a matmul a register tile and leaves other kernels alone") {
  tg::opt::gpu_traits amd;
  amd.max_reduce_unroll = 32;  // as drivers/amd/am_backend_compile.cpp sets it
  auto opts_of = [&](const tg::ast::kernel& k) { return tg::opt::choose_gpu_opts(k.nodes, k.global_ranges, amd); };
  {  // 1024^3: 4 x 4 outputs per work-item still leaves 65536 of them
    const tg::codegen::kernel_opts o = opts_of(matmul_kernel(0, 1024, 1024, 1024, tg::dtype::float32, 1024));
    CHECK(o.upcast == std::vector<int>{4, 4});
    CHECK(o.reduce_unroll == 8);
    CHECK(o.group_lanes == 1);
  }
  {  // 512^3: 2 x 2
    const tg::codegen::kernel_opts o = opts_of(matmul_kernel(0, 512, 512, 512, tg::dtype::float32, 512));
    CHECK(o.upcast == std::vector<int>{2, 2});
    CHECK(o.reduce_unroll == 16);
  }
  {  // batched, 4 x 512 x 512: the tile on the last two ranges
    const tg::codegen::kernel_opts o = opts_of(matmul_kernel(4, 512, 64, 512, tg::dtype::float32, 512));
    CHECK(o.upcast == std::vector<int>{1, 4, 4});
  }
  {  // 256^3: a tile would leave the GPU part-empty; one output each, the reduce unrolled
    const tg::codegen::kernel_opts o = opts_of(matmul_kernel(0, 256, 256, 256, tg::dtype::float32, 256));
    CHECK(o.upcast == std::vector<int>{1, 1});
    CHECK(o.reduce_unroll == 32);
    // a renderer that takes at most 16 iterations per trip (the default traits) gets 16
    const tg::ast::kernel k = matmul_kernel(0, 256, 256, 256, tg::dtype::float32, 256);
    CHECK(tg::opt::choose_gpu_opts(k.nodes, k.global_ranges, {}).reduce_unroll == 16);
  }
  {  // a weighted sum over a symbolic length (a full chunk's attention, P.V over the context): a 4 x 4
     // tile whatever the output count (65536 here), its walk split over half a wave, unroll 2
    const tg::codegen::kernel_opts o = opts_of(weighted_sum_kernel());
    CHECK(o.upcast == std::vector<int>{4, 4});
    CHECK(o.group_lanes == 16);
    CHECK(o.reduce_unroll == 2);
  }
  {  // symbolic rows: left as before until a binding specializes them
    const tg::codegen::kernel_opts o = opts_of(matmul_kernel(0, -1, 64, 1024, tg::dtype::float32, 1024));
    CHECK(o.upcast.empty());
    CHECK(o.reduce_unroll == 1);
  }
  {  // matvec: a group of 32 lanes per row, no tile
    tg::kernel_builder kb;
    auto i = kb.output_range(4096);
    auto k = kb.reduce_range(4096);
    kb.store(0, i, kb.sum(kb.load<float>(1, i * 4096 + k) * kb.load<float>(2, k), k));
    const tg::codegen::kernel_opts o = opts_of(kb.finish());
    CHECK(o.group_lanes == 32);
    CHECK(o.reduce_unroll == 4);
    CHECK(o.upcast.empty());
  }
  {  // an int8 matmul's shape (a lane-hinted dot around a block loop): nested lanes, no tile
    tg::kernel_builder kb;
    auto n = kb.output_range(4096);
    auto l = kb.reduce_range(8);
    auto g = kb.reduce_range(64);
    kb.store(0, n, kb.sum_lanes(kb.sum(kb.cast(tg::dtype::int32, kb.load<std::int16_t>(1, n * 512 + g * 8 + l)), g), l));
    const tg::codegen::kernel_opts o = opts_of(kb.finish());
    CHECK(o.group_lanes == 32);
    CHECK(o.nested_lanes == 4);
    CHECK(o.upcast.empty());
  }
  {  // elementwise over two ranges (a broadcast add): one thread per element
    tg::kernel_builder kb;
    auto i = kb.output_range(1024);
    auto j = kb.output_range(1024);
    kb.store(0, i * 1024 + j, kb.load<float>(1, i) + kb.load<float>(2, j));
    const tg::codegen::kernel_opts o = opts_of(kb.finish());
    CHECK(o.group_lanes == 1);
    CHECK(o.upcast.empty());
    CHECK(o.reduce_unroll == 1);
  }
}

}  // namespace
