// expect: tg::permute<...>: give each axis of the tensor exactly once
// permute_wrong_axis_count.cpp: permute<2, 1, 0> of a matrix (three axes for two).
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 8>);
constexpr auto y = x.permute<2, 1, 0>();
