// expect: tg::shrink: need 0 <= begin <= end <= dim on each axis
// shrink_end_past_dim.cpp: axis 0 has 4 elements, the end is 5.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 4>);
constexpr auto y = x.shrink(tg::begin<0, 0>, tg::end<5, 4>);
