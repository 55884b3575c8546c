// am_fused_dispatch_test.cpp: device::prepare_fused on the emulated GPU (gfx11 and gfx12): several
// kernels, each with its own schedule, as one dispatch whose machine code the interpreter runs.
// It computes what the kernels compute launched one by one (two matvecs of different heights
// sharing their input vector, and an elementwise kernel specialised to a variable), in one
// dispatch, directly and from a graph; a launch or replay with another value of the variable is
// refused; the CPU fuses nothing and says so with an empty prepared kernel.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include <tg/device.hpp>
#include <tg/graph.hpp>
#include <tg/ast/kernel_builder.hpp>

#include "drivers/emu/emu_device.hpp"

namespace {

constexpr std::int64_t cols = 256, rows_a = 300, rows_b = 77, n_c = 1000;

// out[r] = sum_c m[r][c] * x[c]: slots out, m, x.
tg::ast::kernel matvec(std::int64_t rows) {
  tg::kernel_builder kb;
  auto r = kb.output_range(rows);
  auto c = kb.reduce_range(cols);
  kb.store(0, r, kb.sum(kb.load<float>(1, r * cols + c) * kb.load<float>(2, c), c));
  return kb.finish();
}

// out[i] = y[i] * 2 + variable 1 (variable 0 is passed and never read): slots out, y.
tg::ast::kernel scale_add() {
  tg::kernel_builder kb;
  auto i = kb.output_range(n_c);
  kb.store(0, i, kb.load<float>(1, i) * kb.constant(2.0f) + kb.cast(tg::dtype::float32, kb.variable(1)));
  return kb.finish();
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = d(gen);
  return v;
}

tg::buffer upload(tg::device& dev, const std::vector<float>& v) {
  tg::buffer b = dev.allocate(v.size() * 4);
  b.copy_in(v.data(), v.size() * 4);
  return b;
}

std::vector<float> read(tg::buffer& b, std::size_t n) {
  std::vector<float> v(n);
  b.copy_out(v.data(), n * 4);
  return v;
}

std::uint64_t dispatches(tg::device& dev) {
  return dynamic_cast<tg::emu::emu_device&>(dev.impl()).emulated_gpu().stats().dispatches;
}

}  // namespace

TEST_CASE("kernels prepared as one on AMD:EMU run in one dispatch and compute what they compute apart") {
  const tg::ast::kernel a = matvec(rows_a), b = matvec(rows_b), c = scale_add();
  for (const char* name : {"AMD:EMU:gfx11", "AMD:EMU:gfx12"}) {
    CAPTURE(std::string(name));
    tg::device dev(name);
    tg::buffer ma = upload(dev, random_floats(std::size_t(rows_a * cols), 1)),
               mb = upload(dev, random_floats(std::size_t(rows_b * cols), 2)),
               x = upload(dev, random_floats(std::size_t(cols), 3)), y = upload(dev, random_floats(std::size_t(n_c), 4));
    tg::buffer oa = dev.allocate(rows_a * 4), ob = dev.allocate(rows_b * 4), oc = dev.allocate(n_c * 4);
    const std::vector<std::int64_t> vars = {5, 7};

    // Apart: three dispatches.
    dev.prepare(a).launch(std::vector<tg::buffer>{oa, ma, x}, vars);
    dev.prepare(b).launch(std::vector<tg::buffer>{ob, mb, x}, vars);
    dev.prepare(c).launch(std::vector<tg::buffer>{oc, y}, vars);
    dev.synchronize();
    const std::vector<float> want_a = read(oa, rows_a), want_b = read(ob, rows_b), want_c = read(oc, n_c);
    CHECK(want_c[3] == doctest::Approx(2 * random_floats(std::size_t(n_c), 4)[3] + 7));

    const tg::ast::kernel* parts[] = {&a, &b, &c};
    tg::prepared_kernel fused = dev.prepare_fused(parts, vars);
    REQUIRE(fused);
    CHECK(fused.slot_count() == 8);
    CHECK(fused.describe().find("fused: ") != std::string::npos);
    // A second preparation of the same kernels and values is the same program.
    CHECK(dev.prepare_fused(parts, vars).compiled() == fused.compiled());

    const std::vector<float> blank_a(rows_a, -9.0f), blank_b(rows_b, -9.0f), blank_c(n_c, -9.0f);
    oa.copy_in(blank_a.data(), blank_a.size() * 4);
    ob.copy_in(blank_b.data(), blank_b.size() * 4);
    oc.copy_in(blank_c.data(), blank_c.size() * 4);
    const std::uint64_t before = dispatches(dev);
    fused.launch(std::vector<tg::buffer>{oa, ma, x, ob, mb, x, oc, y}, vars);
    dev.synchronize();
    CHECK(dispatches(dev) == before + 1);
    CHECK(read(oa, rows_a) == want_a);
    CHECK(read(ob, rows_b) == want_b);
    CHECK(read(oc, n_c) == want_c);

    // The values it was prepared for are part of it: variable 1 must stay 7 (variable 0 is free).
    CHECK_NOTHROW(fused.launch(std::vector<tg::buffer>{oa, ma, x, ob, mb, x, oc, y}, std::vector<std::int64_t>{6, 7}));
    CHECK_THROWS_AS(fused.launch(std::vector<tg::buffer>{oa, ma, x, ob, mb, x, oc, y}, std::vector<std::int64_t>{5, 8}),
                    tg::usage_error);
    CHECK_THROWS_AS(fused.launch(std::vector<tg::buffer>{oa, ma, x, ob, mb, x, oc}, vars), tg::usage_error);

    // From a graph: one dispatch per replay; a replay with another value is refused.
    tg::graph_builder gb(dev);
    tg::graph_var v1 = gb.var("v1", 7);
    oc.copy_in(blank_c.data(), blank_c.size() * 4);
    gb.add(fused, {oa, ma, x, ob, mb, x, oc, y}, {std::int64_t{5}, v1});
    tg::graph g = gb.finish();
    g.replay({7});
    dev.synchronize();
    CHECK(read(oc, n_c) == want_c);
    CHECK_THROWS_AS(g.replay({8}), tg::usage_error);
    CHECK(dynamic_cast<tg::emu::emu_device&>(dev.impl()).emulated_gpu().faults().empty());
  }
}

TEST_CASE("kernels prepared as one: a single kernel or a device that does not fuse gives an empty kernel") {
  const tg::ast::kernel a = matvec(rows_a), b = matvec(rows_b);
  const tg::ast::kernel* both[] = {&a, &b};
  const tg::ast::kernel* one[] = {&a};
  tg::device cpu("CPU");
  CHECK_FALSE(cpu.prepare_fused(both, {}));
  tg::device gpu("AMD:EMU");
  CHECK_FALSE(gpu.prepare_fused(one, {}));
  CHECK(gpu.prepare_fused(both, {}));
  // A kernel that reads a variable with no value given.
  const tg::ast::kernel c = scale_add();
  const tg::ast::kernel* with_var[] = {&a, &c};
  CHECK_THROWS_AS(gpu.prepare_fused(with_var, std::vector<std::int64_t>{1}), tg::usage_error);
}
