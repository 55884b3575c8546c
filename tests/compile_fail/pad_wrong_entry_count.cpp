// expect: tg::pad: give one 'before' and one 'after' count per axis
// pad_wrong_entry_count.cpp: a matrix padded with one 'before' count and three 'after' counts.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 4>);
constexpr auto y = x.pad(tg::before<1>, tg::after<0, 1, 0>);
