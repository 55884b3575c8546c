// expect: tg::mean: the reduced dims must be compile-time numbers
// mean_over_symbolic_dim.cpp: the mean over a dim whose size is only known at run time.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<tg::sym<"n", 1, 64>, 16>);
constexpr auto y = tg::mean(x, tg::axis<0>);
