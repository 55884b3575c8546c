// expect: tg::mean: at most one of the reduced dims may be symbolic
// mean_over_two_symbolic_dims.cpp: the mean over two symbolic dims, whose count (n * m) is no single dim.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<tg::sym<"n", 1, 64>, tg::sym<"m", 1, 64>>);
constexpr auto y = tg::mean(x, tg::axis<0, 1>);
