// expect: tg::pad: pad counts must be >= 0
// pad_negative_count.cpp: a negative 'before' count (use shrink to cut).
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 4>);
constexpr auto y = x.pad(tg::before<0, -1>, tg::after<0, 0>);
