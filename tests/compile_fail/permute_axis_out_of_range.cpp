// expect: tg::permute<...>: give each axis of the tensor exactly once
// permute_axis_out_of_range.cpp: permute<1, 2> of a matrix names an axis it does not have.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 8>);
constexpr auto y = tg::permute<1, 2>(x);
