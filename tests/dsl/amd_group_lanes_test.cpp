// amd_group_lanes_test.cpp: reduces split across G work-items per output element
// (kernel_opts::group_lanes, exchanged with ds_bpermute_b32; reduce_unroll iterations per
// trip), compiled for gfx1100 and gfx1200
// and interpreted by the emulated GPU, against plain C++: sums and maxima of floats and of
// 32- and 64-bit integers, bounds that G does not divide, a symbolic bound down to 0, two
// top-level reduces in one kernel, a reduce nested inside the split one (and one taking the
// group's other lanes: kernel_opts::nested_lanes), and an output whose
// element count does not fill the last workgroup. Also what the GPU heuristic picks.
#include <tg/tg.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
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
// Work-items per element, and iterations each takes per loop trip (3: a ragged last trip).
struct schedule {
  int lanes, unroll;
};
constexpr schedule schedules[] = {{2, 1}, {8, 3}, {32, 1}, {32, 4}};
constexpr int workgroup = 64;  // two waves: groups in both

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

// Runs `k` on the emulated GPU with `group_lanes` work-items per element; slot 0 is the output
// (`outputs` elements of T, pre-filled with a marker so an element written by no group shows).
template <class T>
std::vector<T> run_grouped(const gpu& g, const tg::ast::kernel& k, int group_lanes, std::size_t outputs,
                           std::vector<host_buffer> inputs, std::vector<std::int64_t> vars = {}, int unroll = 1,
                           int nested = 1) {
  tg::device& dev = emulated(g.device);
  auto& emu = dynamic_cast<tg::emu::emu_device&>(dev.impl());
  tg::codegen::amdgpu_compiler compiler(g.target);
  llvm::LLVMContext context;
  llvm::Module module("k", context);
  compiler.prepare(module);
  tg::codegen::kernel_opts opts;
  opts.group_lanes = group_lanes;
  opts.reduce_unroll = unroll;
  opts.nested_lanes = nested;
  const auto shape = tg::codegen::emit_amdgpu_kernel(module, "k", k.nodes, k.global_ranges, workgroup, opts);
  REQUIRE(shape.group_lanes == group_lanes);
  const tg::amd::code_object co(compiler.compile(module, "k"));
  std::vector<tg::amd::kernarg> args(std::size_t(shape.buffers), tg::amd::kernarg_pointer);
  args.insert(args.end(), std::size_t(shape.vars), tg::amd::kernarg_u64);
  auto program = emu.am_backend::load_program(co, "k", args, {});

  std::vector<T> marker(outputs, T(77));
  std::vector<tg::buffer> buffers{dev.allocate(outputs * sizeof(T))};
  buffers[0].copy_in(marker.data(), outputs * sizeof(T));
  for (const host_buffer& in : inputs) {
    buffers.push_back(dev.allocate(in.bytes));
    buffers.back().copy_in(in.data, in.bytes);
  }
  std::vector<void*> pointers;
  for (const tg::buffer& b : buffers) pointers.push_back(b.data());
  const std::uint64_t groups = tg::codegen::amdgpu_workgroups(k.nodes, k.global_ranges, shape, vars);
  const std::uint64_t dispatches = emu.emulated_gpu().stats().dispatches;
  if (groups > 0)
    program->launch(pointers, vars, {.workgroups = {std::uint32_t(groups), 1, 1}, .workgroup_size = {workgroup, 1, 1}});
  dev.synchronize();
  CHECK(emu.emulated_gpu().stats().dispatches == dispatches + (groups > 0 ? 1 : 0));
  std::string faults;
  for (const auto& f : emu.emulated_gpu().faults()) faults += f.message + "; ";
  REQUIRE_MESSAGE(faults.empty(), faults);
  std::vector<T> got(outputs);
  buffers[0].copy_out(got.data(), outputs * sizeof(T));
  return got;
}

template <class T>
host_buffer bytes_of(const std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}

TEST_CASE("a float matvec and a row max, split across 2, 8 and 32 work-items, match plain C++") {
  const std::int64_t rows = 37, cols = 300;  // 37 * G work-items: the last workgroup is part-empty
  tg::kernel_builder kb;
  auto i = kb.output_range(rows);
  auto k = kb.reduce_range(cols);
  kb.store(0, i, kb.sum(kb.load<float>(1, i * cols + k) * kb.load<float>(2, k), k));
  const tg::ast::kernel matvec = kb.finish();
  tg::kernel_builder mb;
  auto r = mb.output_range(rows);
  auto c = mb.reduce_range(cols);
  mb.store(0, r, mb.max(mb.load<float>(1, r * cols + c), c));
  const tg::ast::kernel row_max = mb.finish();

  const auto w = tg::test::random_floats(std::size_t(rows * cols), 3), x = tg::test::random_floats(std::size_t(cols), 4);
  std::vector<double> want_sum, want_max;
  for (std::int64_t row = 0; row < rows; ++row) {
    double s = 0, m = -std::numeric_limits<double>::infinity();
    for (std::int64_t col = 0; col < cols; ++col) {
      s += double(w[std::size_t(row * cols + col)]) * x[std::size_t(col)];
      m = std::max(m, double(w[std::size_t(row * cols + col)]));
    }
    want_sum.push_back(s);
    want_max.push_back(m);
  }
  for (const gpu& g : gpus)
    for (auto [lanes, unroll] : schedules) {
      CAPTURE(std::string(g.device));
      CAPTURE(lanes);
      CAPTURE(unroll);
      tg::test::check_close(run_grouped<float>(g, matvec, lanes, std::size_t(rows), {bytes_of(w), bytes_of(x)}, {}, unroll), want_sum, 1e-4);
      tg::test::check_close(run_grouped<float>(g, row_max, lanes, std::size_t(rows), {bytes_of(w)}, {}, unroll), want_max, 0);
    }
}

TEST_CASE("32- and 64-bit integer sums split across work-items are exact") {
  const std::int64_t rows = 5, cols = 1000;
  tg::kernel_builder kb;
  auto i = kb.output_range(rows);
  auto k = kb.reduce_range(cols);
  kb.store(0, i, kb.sum(kb.load<std::int32_t>(1, i * cols + k), k));
  const tg::ast::kernel sum32 = kb.finish();
  tg::kernel_builder lb;
  auto r = lb.output_range(rows);
  auto c = lb.reduce_range(cols);
  // Terms above 2^32, so a sum that lost either half of the 64-bit exchange is wrong.
  lb.store(0, r, lb.sum(lb.cast(tg::dtype::int64, lb.load<std::int32_t>(1, r * cols + c)) * (std::int64_t(1) << 33), c));
  const tg::ast::kernel sum64 = lb.finish();
  const auto v = tg::test::random_ints<std::int32_t>(std::size_t(rows * cols), 5, -100000, 100000);
  std::vector<std::int32_t> want32;
  std::vector<std::int64_t> want64;
  for (std::int64_t row = 0; row < rows; ++row) {
    std::int64_t s = 0;
    for (std::int64_t col = 0; col < cols; ++col) s += v[std::size_t(row * cols + col)];
    want32.push_back(std::int32_t(s));
    want64.push_back(s * (std::int64_t(1) << 33));
  }
  for (const gpu& g : gpus)
    for (auto [lanes, unroll] : schedules) {
      CAPTURE(std::string(g.device));
      CAPTURE(lanes);
      CAPTURE(unroll);
      CHECK(run_grouped<std::int32_t>(g, sum32, lanes, std::size_t(rows), {bytes_of(v)}, {}, unroll) == want32);
      CHECK(run_grouped<std::int64_t>(g, sum64, lanes, std::size_t(rows), {bytes_of(v)}, {}, unroll) == want64);
    }
}

TEST_CASE("quad sums of byte products run as v_dot4_i32_iu8 and stay exact, whatever each side's signedness") {
  // out[r] = sum over l of the quad sum over e of a[r][4 l + e] * b[4 l + e], four ways: signed
  // bytes times signed bytes; unsigned nibbles (a byte shifted: known to fit 4 bits) times signed
  // bytes; a sign-extended int16 known to fit a signed byte (an int8 minus 32); and a zero-extended
  // uint16 whose bits would read as a signed byte (0xFF80 | v) but whose value does not fit one,
  // which must stay a plain multiply.
  const std::int64_t rows = 6, cols = 256;
  const auto a = tg::test::random_ints<std::int8_t>(std::size_t(rows * cols), 11, -128, 127);
  const auto b = tg::test::random_ints<std::int8_t>(std::size_t(cols), 12, -128, 127);
  std::vector<std::uint16_t> wide(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) wide[i] = std::uint16_t(std::uint8_t(a[i]));
  for (const char* form : {"signed", "nibbles", "int16", "zero-extended"}) {
    CAPTURE(std::string(form));
    const std::string f = form;
    tg::kernel_builder kb;
    auto r = kb.output_range(rows);
    auto l = kb.reduce_range(cols / 4);
    auto e = kb.reduce_range(4);
    auto j = l * 4 + e;
    auto i8 = [&](tg::kvalue v) { return kb.cast(tg::dtype::int32, v); };
    tg::kvalue side;
    if (f == "signed") side = i8(kb.load<std::int8_t>(1, r * cols + j));
    if (f == "nibbles") side = i8(kb.load<std::uint8_t>(1, r * cols + j) >> kb.constant(tg::dtype::uint8, 4));
    if (f == "int16") side = i8(kb.cast(tg::dtype::int16, kb.cast(tg::dtype::int8, kb.load<std::uint8_t>(1, r * cols + j) >> kb.constant(tg::dtype::uint8, 2))) - kb.constant(tg::dtype::int16, 32));
    if (f == "zero-extended") side = i8(kb.load<std::uint16_t>(1, r * cols + j) | kb.constant(tg::dtype::uint16, 0xFF80));
    kb.store(0, r, kb.sum(kb.sum_lanes(side * i8(kb.load<std::int8_t>(2, j)), e), l));
    const tg::ast::kernel k = kb.finish();
    std::vector<std::int32_t> want;
    for (std::int64_t row = 0; row < rows; ++row) {
      std::int64_t sum = 0;
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::size_t at = std::size_t(row * cols + c);
        const std::uint8_t byte = std::uint8_t(a[at]);
        std::int64_t v = a[at];
        if (f == "nibbles") v = byte >> 4;
        if (f == "int16") v = std::int8_t(byte >> 2) - 32;
        if (f == "zero-extended") v = std::uint16_t(wide[at] | 0xFF80);
        sum += v * b[std::size_t(c)];
      }
      want.push_back(std::int32_t(sum));
    }
    const host_buffer weights = f == "zero-extended" ? bytes_of(wide) : bytes_of(a);
    for (const gpu& g : gpus) {
      CAPTURE(std::string(g.device));
      CHECK(run_grouped<std::int32_t>(g, k, 32, std::size_t(rows), {weights, bytes_of(b)}, {}, 2) == want);
    }
  }
}

TEST_CASE("a symbolic reduce bound, two top-level reduces and a nested one, split across work-items") {
  // out[i] = sum_k x[i, k] + max_j x[i, j], both over n (a variable, 0 included: the sum is 0
  // and the max -inf, the identities) ...
  const std::int64_t rows = 3, max_cols = 200;
  tg::kernel_builder kb;
  auto i = kb.output_range(rows);
  auto n = kb.variable(0);
  auto k = kb.reduce_range(n);
  auto j = kb.reduce_range(n);
  kb.store(0, i, kb.sum(kb.load<float>(1, i * max_cols + k), k) + kb.max(kb.load<float>(1, i * max_cols + j), j));
  const tg::ast::kernel two = kb.finish();
  // ... and nested[i] = sum_k (sum_j x[i, k * 8 + j] * (j + 1)), j < 8: only the outer one is split.
  tg::kernel_builder nb;
  auto r = nb.output_range(rows);
  auto outer = nb.reduce_range(max_cols / 8);
  auto inner = nb.reduce_range(8);
  nb.store(0, r, nb.sum(nb.sum(nb.load<float>(1, r * max_cols + outer * 8 + inner) * nb.cast(tg::dtype::float32, inner + 1), inner), outer));
  const tg::ast::kernel nested = nb.finish();

  const auto x = tg::test::random_floats(std::size_t(rows * max_cols), 6);
  std::vector<double> want_nested;
  for (std::int64_t row = 0; row < rows; ++row) {
    double s = 0;
    for (std::int64_t o = 0; o < max_cols / 8; ++o)
      for (std::int64_t in = 0; in < 8; ++in) s += double(x[std::size_t(row * max_cols + o * 8 + in)]) * double(in + 1);
    want_nested.push_back(s);
  }
  for (const gpu& g : gpus)
    for (auto [lanes, unroll] : schedules) {
      CAPTURE(std::string(g.device));
      CAPTURE(lanes);
      CAPTURE(unroll);
      for (std::int64_t cols : {0, 1, 5, 200}) {
        CAPTURE(cols);
        const auto got = run_grouped<float>(g, two, lanes, std::size_t(rows), {bytes_of(x)}, {cols}, unroll);
        for (std::int64_t row = 0; row < rows; ++row) {
          double s = 0, m = -std::numeric_limits<double>::infinity();  // a max over nothing: its identity
          for (std::int64_t col = 0; col < cols; ++col) {
            s += x[std::size_t(row * max_cols + col)];
            m = std::max(m, double(x[std::size_t(row * max_cols + col)]));
          }
          if (cols == 0) CHECK(got[std::size_t(row)] == -std::numeric_limits<float>::infinity());
          else CHECK(double(got[std::size_t(row)]) == doctest::Approx(s + m).epsilon(1e-5));
        }
      }
      tg::test::check_close(run_grouped<float>(g, nested, lanes, std::size_t(rows), {bytes_of(x)}, {}, unroll), want_nested, 1e-4);
    }
}

TEST_CASE("the codegen refuses group sizes a wave cannot hold") {
  tg::kernel_builder kb;
  auto i = kb.output_range(4);
  auto k = kb.reduce_range(64);
  kb.store(0, i, kb.sum(kb.load<float>(1, i * 64 + k), k));
  const tg::ast::kernel kernel = kb.finish();
  for (auto [lanes, size] : {std::pair{3, 64}, std::pair{64, 64}, std::pair{8, 48}}) {
    CAPTURE(lanes);
    llvm::LLVMContext context;
    llvm::Module module("k", context);
    tg::codegen::kernel_opts opts;
    opts.group_lanes = lanes;
    CHECK_THROWS_WITH_AS(tg::codegen::emit_amdgpu_kernel(module, "k", kernel.nodes, kernel.global_ranges, size, opts),
                         doctest::Contains("threads per element with block size"), tg::usage_error);
  }
}

// kernel_opts::nested_lanes: a short split reduce (8 lanes) whose body is a block loop; the
// group's other lanes split the loop. A symbolic loop bound (0, fewer than the nested lanes,
// ragged), several loop iterations per trip, every lane on the loop (nested = G); a body that
// is a max (not a sum like the split reduce) takes no nested split and must still be right.
TEST_CASE("a lane reduce over a block loop, the loop split across the group's other lanes") {
  const std::int64_t rows = 37, lanes = 8, max_blocks = 40;
  tg::kernel_builder kb;
  auto r = kb.output_range(rows);
  auto l = kb.reduce_range(lanes);
  auto g = kb.reduce_range(kb.variable(0));
  auto at = r * (lanes * max_blocks) + g * lanes + l;
  kb.store(0, r, kb.sum_lanes(kb.sum(kb.load<float>(1, at) * kb.cast(tg::dtype::float32, l + 1), g), l));
  const tg::ast::kernel dot = kb.finish();
  tg::kernel_builder ib;
  auto ir = ib.output_range(rows);
  auto il = ib.reduce_range(lanes);
  auto ig = ib.reduce_range(max_blocks);
  ib.store(0, ir, ib.sum_lanes(ib.sum(ib.load<std::int32_t>(1, ir * (lanes * max_blocks) + ig * lanes + il), ig), il));
  const tg::ast::kernel isum = ib.finish();
  tg::kernel_builder mb;
  auto mr = mb.output_range(rows);
  auto ml = mb.reduce_range(lanes);
  auto mg = mb.reduce_range(max_blocks);
  mb.store(0, mr, mb.sum(mb.max(mb.load<float>(1, mr * (lanes * max_blocks) + mg * lanes + ml), mg), ml));
  const tg::ast::kernel sum_of_max = mb.finish();

  const auto x = tg::test::random_floats(std::size_t(rows * lanes * max_blocks), 8);
  const auto v = tg::test::random_ints<std::int32_t>(std::size_t(rows * lanes * max_blocks), 9, -100000, 100000);
  auto want_dot = [&](std::int64_t blocks) {
    std::vector<double> want;
    for (std::int64_t row = 0; row < rows; ++row) {
      double s = 0;
      for (std::int64_t b = 0; b < blocks; ++b)
        for (std::int64_t ln = 0; ln < lanes; ++ln) s += double(x[std::size_t(row * lanes * max_blocks + b * lanes + ln)]) * double(ln + 1);
      want.push_back(s);
    }
    return want;
  };
  std::vector<std::int32_t> want_isum;
  std::vector<double> want_max;
  for (std::int64_t row = 0; row < rows; ++row) {
    std::int64_t s = 0;
    double m = 0;
    for (std::int64_t ln = 0; ln < lanes; ++ln) {
      double lane_max = -std::numeric_limits<double>::infinity();
      for (std::int64_t b = 0; b < max_blocks; ++b) {
        s += v[std::size_t(row * lanes * max_blocks + b * lanes + ln)];
        lane_max = std::max(lane_max, double(x[std::size_t(row * lanes * max_blocks + b * lanes + ln)]));
      }
      m += lane_max;
    }
    want_isum.push_back(std::int32_t(s));
    want_max.push_back(m);
  }
  struct nested_schedule {
    int lanes, nested, unroll;
  };
  for (const gpu& gp : gpus)
    for (auto [group, nested, unroll] : {nested_schedule{32, 4, 1}, nested_schedule{32, 4, 3}, nested_schedule{16, 2, 4},
                                         nested_schedule{32, 32, 2}}) {
      CAPTURE(std::string(gp.device));
      CAPTURE(group);
      CAPTURE(nested);
      CAPTURE(unroll);
      for (std::int64_t blocks : {0, 1, 3, 37, 40}) {
        CAPTURE(blocks);
        tg::test::check_close(run_grouped<float>(gp, dot, group, std::size_t(rows), {bytes_of(x)}, {blocks}, unroll, nested),
                              want_dot(blocks), 1e-4);
      }
      CHECK(run_grouped<std::int32_t>(gp, isum, group, std::size_t(rows), {bytes_of(v)}, {}, unroll, nested) == want_isum);
      tg::test::check_close(run_grouped<float>(gp, sum_of_max, group, std::size_t(rows), {bytes_of(x)}, {}, unroll, nested),
                            want_max, 1e-5);
    }
}

// The GPU heuristic splits a reduce where neighbouring threads would otherwise read far apart
// (rows of a matvec, of a norm) or where there are too few elements to fill the GPU, and leaves
// one thread per element where the outputs already read memory contiguously (a matmul's
// columns) or there is no long reduce.
TEST_CASE("the GPU heuristic puts a group of threads on each row-walking reduce") {
  auto group_of = [](const tg::ast::kernel& k) { return tg::opt::choose_gpu_opts(k.nodes, k.global_ranges, {}).group_lanes; };
  {  // matvec, 4096 rows: rows 16 KiB apart along the outputs
    tg::kernel_builder kb;
    auto i = kb.output_range(4096);
    auto k = kb.reduce_range(4096);
    kb.store(0, i, kb.sum(kb.load<float>(1, i * 4096 + k) * kb.load<float>(2, k), k));
    const tg::ast::kernel matvec = kb.finish();
    CHECK(group_of(matvec) == 32);
    CHECK(tg::opt::choose_gpu_opts(matvec.nodes, matvec.global_ranges, {}).reduce_unroll == 4);
  }
  {  // matmul 512^3: the columns of b and c are contiguous
    tg::kernel_builder kb;
    auto i = kb.output_range(512);
    auto j = kb.output_range(512);
    auto k = kb.reduce_range(512);
    kb.store(0, i * 512 + j, kb.sum(kb.load<float>(1, i * 512 + k) * kb.load<float>(2, k * 512 + j), k));
    CHECK(group_of(kb.finish()) == 1);
  }
  {  // a total sum over a symbolic length: one output
    tg::kernel_builder kb;
    auto k = kb.reduce_range(kb.variable(0));
    kb.store(0, kb.index(0), kb.sum(kb.load<float>(1, k), k));
    CHECK(group_of(kb.finish()) == 32);
  }
  {  // elementwise: no reduce
    tg::kernel_builder kb;
    auto i = kb.output_range(1 << 20);
    kb.store(0, i, kb.load<float>(1, i) * 2.0f);
    CHECK(group_of(kb.finish()) == 1);
  }
  {  // an int8 matmul's shape: a dot over 8 lanes around a loop over 64 blocks; the wave's other
     // lanes split the blocks (4 threads on each lane of the dot), so a wave reads 4 neighbouring blocks
    tg::kernel_builder kb;
    auto n = kb.output_range(4096);
    auto l = kb.reduce_range(8);
    auto g = kb.reduce_range(64);
    kb.store(0, n, kb.sum_lanes(kb.sum(kb.cast(tg::dtype::int32, kb.load<std::int16_t>(1, n * 512 + g * 8 + l)), g), l));
    const tg::ast::kernel k = kb.finish();
    const tg::codegen::kernel_opts opts = tg::opt::choose_gpu_opts(k.nodes, k.global_ranges, {});
    CHECK(opts.group_lanes == 32);
    CHECK(opts.nested_lanes == 4);
  }
  {  // Q8_0's shape: 16 lanes each reading 2 of a 34-byte block's weight bytes. With a target's
     // min_thread_block_bytes of 4 (NV's), 8 threads share a block, each taking 2 of its lanes,
     // and the wave takes 4 blocks at once; without one (AMD), 16 threads and 2 blocks. A block of
     // 144 bytes over 8 lanes (Q4_K's) already gives each thread 18: unchanged either way.
    auto int8_dot = [](std::int64_t lanes, std::int64_t block_bytes, std::int64_t rows = 4096,
                       std::int64_t blocks = 64) {
      tg::kernel_builder kb;
      auto n = kb.output_range(rows);
      auto l = kb.reduce_range(lanes);
      auto g = kb.reduce_range(blocks);
      auto w_at = n * (blocks * block_bytes) + g * block_bytes + 2 + l * 2;
      auto w = kb.cast(tg::dtype::int32, kb.load<std::int8_t>(1, w_at));
      auto x = kb.cast(tg::dtype::int32, kb.load<std::int16_t>(2, g * 32 + l * 2));
      kb.store(0, n, kb.sum_lanes(kb.sum(w * x, g), l));
      return kb.finish();
    };
    tg::opt::gpu_traits nv;
    nv.min_thread_block_bytes = 4;
    const tg::ast::kernel q8 = int8_dot(16, 34), q4k = int8_dot(8, 144);
    const tg::codegen::kernel_opts q8_nv = tg::opt::choose_gpu_opts(q8.nodes, q8.global_ranges, nv);
    const tg::codegen::kernel_opts q8_amd = tg::opt::choose_gpu_opts(q8.nodes, q8.global_ranges, {});
    CHECK((q8_nv.group_lanes == 32 && q8_nv.nested_lanes == 4));
    CHECK((q8_amd.group_lanes == 32 && q8_amd.nested_lanes == 2));
    CHECK(tg::opt::choose_gpu_opts(q4k.nodes, q4k.global_ranges, nv).nested_lanes == 4);
    CHECK(tg::opt::choose_gpu_opts(q4k.nodes, q4k.global_ranges, {}).nested_lanes == 4);
    // 64 blocks over 4 nested groups: 16 a thread, 4 trips of 4. With max_split_trips 2 the
    // unroll doubles to 8 (2 trips); without, it stays 4.
    CHECK(q8_nv.reduce_unroll == 4);
    nv.max_split_trips = 2;
    CHECK(tg::opt::choose_gpu_opts(q8.nodes, q8.global_ranges, nv).reduce_unroll == 8);
    CHECK(q8_amd.reduce_unroll == 4);
    // One trip wanted, but at most 8 blocks a trip (AMD's traits): 32 blocks a thread, unroll 8.
    tg::opt::gpu_traits capped;
    capped.max_split_trips = 1;
    capped.max_split_unroll = 8;
    CHECK(tg::opt::choose_gpu_opts(q8.nodes, q8.global_ranges, capped).reduce_unroll == 8);
    capped.max_split_unroll = 32;
    CHECK(tg::opt::choose_gpu_opts(q8.nodes, q8.global_ranges, capped).reduce_unroll == 16);  // max_reduce_unroll's 16
    // Super-blocks (Q4_K's 144 bytes) over 4 nested groups, at most 16 a trip: 64 blocks (16 a
    // thread) fit one trip; 128 (32 a thread) do not, and take no unroll rather than 2 trips of 16
    // (where LLVM issued the loads one wait at a time: the 8B's ffn_down, 14 a thread, on AMD).
    capped.max_split_unroll = 16;
    const tg::ast::kernel q4k_128 = int8_dot(8, 144, 4096, 128);
    const tg::codegen::kernel_opts q4k_one_trip = tg::opt::choose_gpu_opts(q4k.nodes, q4k.global_ranges, capped);
    CHECK((q4k_one_trip.nested_lanes == 4 && q4k_one_trip.reduce_unroll == 16));
    const tg::codegen::kernel_opts q4k_long = tg::opt::choose_gpu_opts(q4k_128.nodes, q4k_128.global_ranges, capped);
    CHECK((q4k_long.nested_lanes == 4 && q4k_long.reduce_unroll == 1));
    capped.max_split_unroll = 8;
    // Q8_0's 34-byte blocks keep the capped unroll however long the loop: 64 blocks over 2
    // nested groups, 32 a thread, unroll 8.
    CHECK(tg::opt::choose_gpu_opts(q8.nodes, q8.global_ranges, capped).reduce_unroll == 8);
    // A sparse kernel (sparse_block_bytes; an H200's busy_threads): 1024 rows of waves are under
    // a quarter of them, so each thread takes 16 bytes of a block, as 2 threads a block and 16
    // blocks at once, and its 4 blocks in one trip. 4096 rows are not: the split above.
    nv.max_split_trips = 16;
    nv.busy_threads = 132 * 2048;
    nv.sparse_block_bytes = 16;
    const tg::ast::kernel kv = int8_dot(16, 34, 1024);
    const tg::codegen::kernel_opts kv_nv = tg::opt::choose_gpu_opts(kv.nodes, kv.global_ranges, nv);
    CHECK((kv_nv.group_lanes == 32 && kv_nv.nested_lanes == 16 && kv_nv.reduce_unroll == 4));
    const tg::codegen::kernel_opts q8_busy = tg::opt::choose_gpu_opts(q8.nodes, q8.global_ranges, nv);
    CHECK((q8_busy.nested_lanes == 4 && q8_busy.reduce_unroll == 4));
    CHECK(tg::opt::choose_gpu_opts(kv.nodes, kv.global_ranges, {}).nested_lanes == 2);  // AMD: no such rule
  }
  {  // the LLM's activation rounding for one token: a block maximum per 256 (or 32) values, the
     // token range a launch variable (counted as 1). 16 outputs leave the GPU idle, so even
     // these short reduces split across a wave; with 2^16 rows of them they would not.
    auto block_max = [](bool symbolic_rows, std::int64_t blocks, std::int64_t block) {
      tg::kernel_builder kb;
      auto t = symbolic_rows ? kb.output_range(kb.variable(0)) : kb.output_range(1 << 16);
      auto b = kb.output_range(blocks);
      auto i = kb.reduce_range(block);
      auto x = kb.load<float>(1, t * (blocks * block) + b * block + i);
      kb.store(0, t * blocks + b, kb.max(kb.maximum(x, -x), i));
      return kb.finish();
    };
    CHECK(group_of(block_max(true, 16, 256)) == 32);
    CHECK(group_of(block_max(true, 128, 32)) == 32);
    CHECK(group_of(block_max(false, 16, 256)) == 1);
  }
  {  // a one-output reduce over 2048 values (the 1B decode's RMS norm) leaves the GPU idle: 32
     // work-items walk their 64 values each in as few trips as traits.sparse_max_unroll allows
    tg::kernel_builder kb;
    auto t = kb.output_range(kb.variable(0));
    auto k = kb.reduce_range(2048);
    auto x = kb.load<float>(1, t * 2048 + k);
    kb.store(0, t, kb.sum(x * x, k));
    const tg::ast::kernel norm = kb.finish();
    tg::opt::gpu_traits t16, t32;
    t16.sparse_block_bytes = t32.sparse_block_bytes = 16;
    t32.sparse_max_unroll = t32.max_reduce_unroll = 32;
    const tg::codegen::kernel_opts o16 = tg::opt::choose_gpu_opts(norm.nodes, norm.global_ranges, t16);
    const tg::codegen::kernel_opts o32 = tg::opt::choose_gpu_opts(norm.nodes, norm.global_ranges, t32);
    CHECK((o16.group_lanes == 32 && o16.reduce_unroll == 16));
    CHECK((o32.group_lanes == 32 && o32.reduce_unroll == 32));
    CHECK(tg::opt::choose_gpu_opts(norm.nodes, norm.global_ranges, {}).reduce_unroll == 4);  // no sparse rule
  }
  {  // decode attention's weighted sum of V: 8 KV heads x 4 query heads x 64 values a token (the
     // token range a launch variable, counted as 1), each a reduce over the context: too few
     // outputs to fill the GPU one thread each, so a group splits each context walk, though the
     // outputs are contiguous; with 64 tokens as constants there are outputs enough, and the walk
     // (symbolic: as long as the context) takes a 4 x 4 tile of (g, d) split over half a wave, 4
     // iterations a trip (its 8192 tiles at half a wave are twice busy_threads)
    auto weighted_v = [](bool symbolic_tokens, std::int64_t group = 4) {
      tg::kernel_builder kb;
      auto ctx = kb.variable(1);
      auto h = kb.output_range(8);
      auto t = symbolic_tokens ? kb.output_range(kb.variable(0)) : kb.output_range(64);
      auto g = kb.output_range(group);
      auto d = kb.output_range(64);
      auto p = kb.reduce_range(ctx);
      auto weight = kb.load<float>(1, ((t * 8 + h) * group + g) * ctx + p);
      kb.store(0, ((t * 8 + h) * group + g) * 64 + d, kb.sum(weight * kb.load<float>(2, p * 512 + h * 64 + d), p));
      return kb.finish();
    };
    CHECK(group_of(weighted_v(true)) == 32);
    const tg::ast::kernel chunk = weighted_v(false);
    const tg::codegen::kernel_opts tiled = tg::opt::choose_gpu_opts(chunk.nodes, chunk.global_ranges, {});
    CHECK(tiled.group_lanes == 16);
    CHECK(tiled.reduce_unroll == 4);
    CHECK(tiled.upcast == std::vector<int>{1, 1, 4, 4});
    // Seven query heads a KV head (Qwen2.5-0.5B's 14 over 2) do not tile by 4: choose_matmul_tile's
    // tile (1 x 2 here), one work-item to a walk, as before the rule.
    const tg::ast::kernel seven = weighted_v(false, 7);
    const tg::codegen::kernel_opts untiled = tg::opt::choose_gpu_opts(seven.nodes, seven.global_ranges, {});
    CHECK(untiled.group_lanes <= 1);
    CHECK(untiled.upcast == std::vector<int>{1, 1, 1, 2});
  }
  {  // a decode step's weighted sum in 8 runs over the context (8 KV heads x 8 runs x 4 query heads x d
     // a token): the walks split over half a wave, or a whole one where the tiles are fewer than
     // busy_threads / 2 threads at half a wave (d = 64: 1024 tiles)
    auto runs = [](std::int64_t d_len) {
      tg::kernel_builder kb;
      auto length = kb.variable(1);
      auto h = kb.output_range(8);
      auto r = kb.output_range(8);
      auto t = kb.output_range(kb.variable(0));
      auto g = kb.output_range(4);
      auto d = kb.output_range(d_len);
      auto j = kb.reduce_range(length);
      auto c = r * length + j;
      auto weight = kb.load<float>(1, ((t * 8 + h) * 4 + g) * 4096 + c);
      kb.store(0, (((r * 8 + h) * 4 + g) + t) * d_len + d, kb.sum(weight * kb.load<float>(2, (h * 4096 + c) * d_len + d), j));
      return kb.finish();
    };
    const tg::ast::kernel wide = runs(128), narrow = runs(64);
    const tg::codegen::kernel_opts o128 = tg::opt::choose_gpu_opts(wide.nodes, wide.global_ranges, {});
    const tg::codegen::kernel_opts o64 = tg::opt::choose_gpu_opts(narrow.nodes, narrow.global_ranges, {});
    CHECK(o128.upcast == std::vector<int>{1, 1, 1, 4, 4});
    CHECK(o128.group_lanes == 16);
    CHECK(o64.upcast == std::vector<int>{1, 1, 1, 4, 4});
    CHECK(o64.group_lanes == 32);
  }
  {  // a matrix-matrix product over a constant K keeps choose_matmul_tile's tile, no group
    tg::kernel_builder kb;
    auto i = kb.output_range(512);
    auto j = kb.output_range(512);
    auto k = kb.reduce_range(256);
    kb.store(0, i * 512 + j, kb.sum(kb.load<float>(1, i * 256 + k) * kb.load<float>(2, k * 512 + j), k));
    const tg::ast::kernel mm = kb.finish();
    const tg::codegen::kernel_opts o = tg::opt::choose_gpu_opts(mm.nodes, mm.global_ranges, {});
    CHECK(o.group_lanes <= 1);
  }
  {  // many rows with a short reduce: one thread each
    tg::kernel_builder kb;
    auto i = kb.output_range(1 << 20);
    auto k = kb.reduce_range(8);
    kb.store(0, i, kb.sum(kb.load<float>(1, i * 8 + k), k));
    CHECK(group_of(kb.finish()) == 1);
  }
  {  // decode attention's scores: one per cached position (the context start_pos + T, a sum of
     // launch variables, grows to thousands), each a dot over a 64-value head: 4 work-items an
     // output, unroll 4; counted at context 1 the GPU looked idle and the head dot took a wave
    auto scores = [](bool context_range) {
      tg::kernel_builder kb;
      auto kvh = kb.output_range(8);
      auto t = kb.output_range(kb.variable(0));
      auto c = kb.output_range(context_range ? kb.variable(1) + kb.variable(0) : kb.variable(2));
      auto g = kb.output_range(4);
      auto d = kb.reduce_range(64);
      auto k = kb.load<float>(2, (kvh * 4096 + c) * 64 + d);
      kb.store(0, ((kvh * 4 + g) * 8 + t) * 4096 + c, kb.sum(kb.load<float>(1, (t * 32 + kvh * 4 + g) * 64 + d) * k, d));
      return kb.finish();
    };
    const tg::ast::kernel growing = scores(true), counted = scores(false);
    const tg::codegen::kernel_opts o = tg::opt::choose_gpu_opts(growing.nodes, growing.global_ranges, {});
    CHECK((o.group_lanes == 4 && o.reduce_unroll == 4 && o.nested_lanes == 1));
    CHECK(group_of(counted) == 32);  // a bare variable (a token count) counts as 1: the wave split stays
  }
  {  // decode attention's row max over the context (symbolic) for 32 rows: the GPU idle, 16
     // iterations a trip; with 64 tokens as constants (2048 rows) the unroll stays 4
    auto row_max = [](bool symbolic_tokens) {
      tg::kernel_builder kb;
      auto ctx = kb.variable(1);
      auto h = kb.output_range(32);
      auto t = symbolic_tokens ? kb.output_range(kb.variable(0)) : kb.output_range(64);
      auto p = kb.reduce_range(ctx);
      kb.store(0, h * 64 + t, kb.max(kb.load<float>(1, (h * 64 + t) * ctx + p), p));
      return kb.finish();
    };
    const tg::ast::kernel idle = row_max(true), busy = row_max(false);
    const tg::codegen::kernel_opts o = tg::opt::choose_gpu_opts(idle.nodes, idle.global_ranges, {});
    CHECK((o.group_lanes == 32 && o.reduce_unroll == 16));
    CHECK(tg::opt::choose_gpu_opts(busy.nodes, busy.global_ranges, {}).reduce_unroll == 4);
    // Two reduces over the context in one kernel (decode attention in one kernel, for a model of
    // few heads) keep unroll 4: at 16 they took 256 VGPRs and spilled.
    tg::kernel_builder kb;
    auto ctx = kb.variable(1);
    auto h = kb.output_range(32);
    auto p = kb.reduce_range(ctx), q = kb.reduce_range(ctx);
    kb.store(0, h, kb.max(kb.load<float>(1, h * ctx + p), p) + kb.sum(kb.load<float>(1, h * ctx + q), q));
    const tg::ast::kernel both = kb.finish();
    CHECK(tg::opt::choose_gpu_opts(both.nodes, both.global_ranges, {}).reduce_unroll == 4);
  }
}

}  // namespace
