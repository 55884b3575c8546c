// expect: tg::sum/max: an axis is out of range for this tensor
// sum_axis_out_of_range.cpp: axis 2 of a matrix.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 8>);
constexpr auto y = x.sum(tg::axis<2>);
