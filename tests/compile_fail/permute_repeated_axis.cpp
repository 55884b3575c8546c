// expect: tg::permute<...>: give each axis of the tensor exactly once
// permute_repeated_axis.cpp: permute<0, 0> names axis 0 twice and axis 1 never.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 8>);
constexpr auto y = x.permute<0, 0>();
