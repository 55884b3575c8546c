// expect: tg::sum/max: an axis is out of range for this tensor
// max_negative_axis_out_of_range.cpp: axis -3 of a matrix (only -2 and -1 count from the end).
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 8>);
constexpr auto y = x.max(tg::axis<-3>);
