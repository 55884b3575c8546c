// control.cpp: the correct counterpart of every misuse here; it must compile, which proves the
// harness's compiler command (include paths, flags) works and the misuse files fail for their misuse.
#include <tg/tg.hpp>

namespace {

constexpr auto a = tg::input<float>("a", tg::dims<4, 3>);
constexpr auto b = tg::input<float>("b", tg::dims<1, 3>);
constexpr auto c = tg::input<bool>("c", tg::dims<4, 1>);
constexpr auto i = tg::input<std::int32_t>("i", tg::dims<4>);
constexpr auto s = tg::input<float>("s", tg::dims<tg::sym<"sequence_length_in_tok", 1, 64>, 16>);

constexpr auto elementwise = tg::where(c, a + b, a * 2.0f);
constexpr auto floats = tg::exp2(i.cast<float>()) + tg::log2(i.cast<float>()) + tg::sqrt(i.cast<float>()) +
                        tg::reciprocal(i.cast<double>()) + tg::sin(i.cast<float>()) + tg::exp(i.cast<float>());
constexpr auto matmul = tg::matmul(a, tg::input<float>("w", tg::dims<3, 5>));
constexpr auto vec_matmul = tg::matmul(tg::input<float>("v", tg::dims<3>), tg::input<float>("w2", tg::dims<3, 5>));
constexpr auto reduced = a.sum(tg::axis<1>) + a.max(tg::axis<-2>, tg::keepdim).reshape(tg::dims<3>).sum();
constexpr auto moved = a.reshape(tg::dims<3, 4>).permute<1, 0>() + tg::permute<1, 0>(tg::transpose(a));
constexpr auto expanded = b.expand(tg::dims<4, 3>) + tg::broadcast_to<tg::shape_t{2, 4, 3}>(b);
constexpr auto padded = a.pad(tg::before<0, 1>, tg::after<0, 0>).shrink(tg::begin<0, 1>, tg::end<4, 4>);
constexpr auto symbolic = tg::mean(s, tg::axis<1>) + s.shrink(tg::begin<0, 0>, tg::end<tg::sym<"sequence_length_in_tok", 1, 64>, 8>).sum(tg::axis<1>);
constexpr auto mean_symbolic = tg::mean(s, tg::axis<0>) + tg::rmsnorm(s, tg::scalar_input<float>("eps"));  // one symbolic dim
constexpr auto eight_dims = tg::input<float>("e", tg::dims<1, 1, 1, 1, 1, 1, 1, 2>);

constexpr auto plan = tg::lower(tg::relu(matmul).sum(tg::axis<1>) + elementwise.sum(tg::axis<1>));
static_assert(plan.kernel_count() >= 1);

}  // namespace
