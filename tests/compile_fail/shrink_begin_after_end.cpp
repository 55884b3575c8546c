// expect: tg::shrink: need 0 <= begin <= end <= dim on each axis
// shrink_begin_after_end.cpp: axis 1 is shrunk to [3, 2).
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 4>);
constexpr auto y = x.shrink(tg::begin<0, 3>, tg::end<4, 2>);
