// bind_test.cpp: tg::bind_kernels, a plan's kernels launched on the caller's buffers with some
// variables folded in and the others read from launch values, against device::run of the plan.
#include <tg/tg.hpp>
#include <tg/lower/bind.hpp>

#include "tests/dsl/reference.hpp"

using tg::test::check_close;
using tg::test::test_device;
using tg::test::random_floats;

namespace {

constexpr auto rows = tg::sym<"rows", 1, 16>;
constexpr auto width = tg::sym<"width", 1, 128>;

tg::buffer upload(const std::vector<float>& v) {
  tg::buffer b = test_device().allocate(std::max<std::size_t>(v.size(), 1) * 4);
  if (!v.empty()) b.copy_in(v.data(), v.size() * 4);
  return b;
}

TEST_CASE("a bound rmsnorm plan gives device::run's results for every launch value") {
  constexpr auto x = tg::input<float>("x", tg::dims<rows, width>);
  constexpr auto w = tg::input<float>("w", tg::dims<width>);
  constexpr auto plan = tg::lower(tg::rmsnorm(x, w, tg::scalar_input<float>("eps")));
  const std::int64_t wd = 96;
  // rows stays a variable, launch value 1 (slot 0 holds something else, to check the renumbering)
  const std::vector<tg::var_bind> vars = {{"width", wd}, {"rows", 16, 1}};
  const auto kernels = tg::bind_kernels(plan.view(), vars);
  REQUIRE(kernels.size() == 2);
  for (const auto& k : kernels)
    for (const auto& n : k.kernel.nodes)
      if (n.o == tg::ast::op::variable) CHECK(n.arg == 1);  // width was folded in
  const auto ws = random_floats(std::size_t(wd), 5);
  const std::vector<float> eps{1e-3f};
  for (std::int64_t r : {1, 7, 16}) {
    const auto xs = random_floats(std::size_t(r * wd), std::uint32_t(r));
    auto want = test_device().run(plan, {{"x", xs}, {"w", ws}, {"eps", eps}}, {{"rows", r}, {"width", wd}}).to_vector<float>();
    // plan buffers by id: inputs from the host, the output and the intermediate allocated
    std::vector<tg::buffer> bufs;
    for (std::size_t b = 0; b < plan.view().buffers.size(); ++b) {
      const tg::buffer_info& info = plan.view().buffers[b];
      if (info.role == tg::buffer_role::input) {
        std::string_view name = info.name;
        bufs.push_back(upload(name == "x" ? xs : name == "w" ? ws : eps));
      } else {
        bufs.push_back(test_device().allocate(std::size_t(tg::bound_numel(plan.view(), int(b), vars)) * 4));
      }
    }
    const std::int64_t launch[] = {-99, r};
    for (const auto& k : kernels) {
      std::vector<tg::buffer> slots;
      for (int b : k.buffers) slots.push_back(bufs[std::size_t(b)]);
      test_device().prepare(k.kernel).launch(slots, launch);
    }
    std::vector<float> got(std::size_t(r * wd));
    bufs[std::size_t(plan.view().output)].copy_out(got.data(), got.size() * 4);
    check_close(got, want, 1e-6);
  }
}

TEST_CASE("bind_kernels rejects unknown, missing and out-of-range variables") {
  if (tg::test::skip_unless_cpu("bind_kernels' checks involve no device; the CPU run covers them")) return;
  constexpr auto x = tg::input<float>("x", tg::dims<rows, width>);
  constexpr auto plan = tg::lower(x * 2.0f);
  CHECK_THROWS_AS(tg::bind_kernels(plan.view(), {{"rows", 2}}), tg::usage_error);
  CHECK_THROWS_AS(tg::bind_kernels(plan.view(), {{"rows", 2}, {"width", 3}, {"depth", 1}}), tg::usage_error);
  CHECK_THROWS_AS(tg::bind_kernels(plan.view(), {{"rows", 17}, {"width", 3}}), tg::usage_error);
  CHECK(tg::bind_kernels(plan.view(), {{"rows", 2}, {"width", 3}}).size() == 1);
}

}  // namespace
