// expect: tg::pad: a symbolic dim cannot be padded
// pad_symbolic_dim.cpp: padding a dim whose size is only known at run time.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<tg::sym<"n", 1, 64>, 4>);
constexpr auto y = x.pad(tg::before<1, 0>, tg::after<0, 0>);
